import Foundation
import StoreRelayCluster
import StoreRelayCore
import StoreRelayNet
import StoreRelayTestSupport

/// Notifications acknowledged one after the other on a thread of their own while a test
/// moves the server underneath (a reshard, a failover), each retried as Apple retries a 503
/// until it is answered: what was acknowledged must be on the server afterwards.
final class TopologyLoad: @unchecked Sendable {
    // Invariant: `thread` is touched only by the test's thread; the rest is behind locks.
    private let acknowledgement: ClusterAcknowledgement
    private let stopping = Locked(false)
    private let record = Locked<(acknowledged: [String], refusals: [String])>(([], []))
    private let finished = DispatchSemaphore(value: 0)

    init(_ acknowledgement: ClusterAcknowledgement) {
        self.acknowledgement = acknowledgement
        Thread.detachNewThread { [self] in run() }
    }

    /// Ids answered `stored` or `duplicate` (a 200 to Apple), in order.
    var acknowledged: [String] { record.current.acknowledged }
    /// Why acknowledgements were refused (503s), in order.
    var refusals: [String] { record.current.refusals }

    /// Lets the notification in hand finish (up to `timeout` seconds of retries), then stops.
    func stop(timeout: Double = 60) -> Bool {
        stopping.withLock { $0 = true }
        return finished.wait(timeout: .now() + timeout) == .success
    }

    private func run() {
        defer { finished.signal() }
        var index = 0
        while !stopping.current {
            let id = "load-\(index)"
            while true {
                switch acknowledge(id) {
                case .stored, .duplicate:
                    record.withLock { $0.acknowledged.append(id) }
                case .unavailable(let why):
                    record.withLock { $0.refusals.append(why) }
                    Thread.sleep(forTimeInterval: 0.02)
                    continue
                }
                break
            }
            index += 1
            Thread.sleep(forTimeInterval: 0.005)
        }
    }

    private func acknowledge(_ id: String) -> ClusterAcknowledgement.Outcome {
        let outcome = Locked<ClusterAcknowledgement.Outcome?>(nil)
        let done = DispatchSemaphore(value: 0)
        acknowledgement.acknowledge(notification(id, destinations: ["billing"])) { result in
            outcome.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        return outcome.current!
    }

    /// The acknowledged ids `server` lacks: its dedupe marker, its record or its stream entry.
    func missing(on server: RedisServerProcess) throws -> [String] {
        let keys = ClusterKeys()
        let queued = Set(try server.command("XRANGE", keys.queue("billing"), "-", "+").split(separator: "\n").map(String.init))
        return try acknowledged.filter { id in
            try server.command("EXISTS", keys.seen(id)) != "1" || server.command("EXISTS", keys.event(id)) != "1" || !queued.contains(id)
        }
    }
}
