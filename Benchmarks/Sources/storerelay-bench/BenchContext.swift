import BenchKit
import StoreRelaySimulator
#if canImport(Glibc)
import Glibc
#endif

/// What every benchmark shares: the binary under test, the scratch directory, the signing
/// chain, the event loop and the run length.
struct BenchContext {
    let binary: String
    let work: String
    /// The bench chain's directory (root.pem, intermediate.pem, leaf.pem, leaf-key.pem).
    let chain: String
    let authority: DevCertificateAuthority
    let loop: EventLoop
    /// Length of each timed phase, seconds.
    let seconds: Double
    /// Keep-alive connections of the load generator at saturation (closed loop).
    let connections: Int
    /// Keep-alive connections at a fixed offered rate: enough that none waits for a free one.
    static let pacedConnections = 64
    /// Attach `perf record` to the gateway during the saturation phases.
    let profile: Bool
    /// Concurrency levels of the acceptance benchmark's sweep.
    let sweep: [Int]
    /// Saturation rounds per fan-out scenario (memory across repeated runs).
    let fanoutRounds: Int
    /// Fan-out scenarios to run ("1 webhook", "4 webhooks", "file queue"); empty: all.
    let scenarios: Set<String>

    /// Lines added to every gateway's routes.conf (`--verify-nested yes`: `verify-nested yes`).
    var gatewayLines: [String] = []

    var trustRoot: String { chain + "/root.pem" }

    /// The gateway with `destinations`, in a fresh directory under the scratch directory.
    func startGateway(_ name: String, _ destinations: [GatewayRunner.Destination], extra: [String] = []) throws -> GatewayRunner {
        try GatewayRunner(binary: binary, directory: work + "/" + name, trustRoot: trustRoot, destinations: destinations,
                          extra: gatewayLines + extra)
    }

    func corpus(_ count: Int) throws -> Corpus {
        try Corpus.make(count: count, authority: authority, path: GatewayRunner.notificationPath)
    }

    /// Warms the chain cache and the connections' buffers with 200 notifications (not
    /// measured); every one must be accepted. Returns the warm-up corpus.
    @discardableResult
    func warmUp(_ gateway: GatewayRunner, observed: Observed, label: String = "") throws -> Corpus {
        let warm = try corpus(200)
        let run = try LoadRun.run(loop: loop, port: gateway.port, requests: warm.requests, connections: 16,
                                  pace: .closedLoop, seconds: 5, server: observed)
        guard run.result.ok == warm.requests.count else {
            throw BenchError("\(label)warm-up failed: \(run.text)\n\(run.result.firstFailure ?? "")\n\(gateway.logTail)")
        }
        return warm
    }

    /// Runs the loop for `seconds` (lets a process settle, or deliveries drain) until `done`.
    func wait(seconds: Double, until done: () -> Bool = { false }) {
        loop.run(until: Monotonic.nanoseconds() + UInt64(seconds * 1e9), done)
    }
}
