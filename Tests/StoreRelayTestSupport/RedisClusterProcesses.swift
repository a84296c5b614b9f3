import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A real Redis Cluster of `redis-server` primaries on loopback ports, each in its own
/// directory, durable as cluster mode requires, joined by `redis-cli --cluster create`.
/// The test moves slots as an operator would (`CLUSTER SETSLOT ... IMPORTING/MIGRATING`,
/// `MIGRATE`, `CLUSTER SETSLOT ... NODE`), over the harness's own sockets.
public final class RedisClusterProcesses: @unchecked Sendable {
    // Invariant: set once in init, read-only after.
    public let nodes: [RedisServerProcess]

    /// Where `redis-cli` is; nil when it is not installed.
    public static var cli: String? {
        ["/usr/bin/redis-cli", "/usr/local/bin/redis-cli"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Whether `redis-server` and `redis-cli` are both installed.
    public static var isAvailable: Bool { RedisServerProcess.isAvailable && cli != nil }

    public static let skipMessage = "redis-server and redis-cli are needed for a Redis Cluster (apt-get install redis-server redis-tools)"

    /// `extraArguments` go to every node (an ACL user, say).
    public init(primaries: Int = 3, _ flavor: RedisServerProcess.Flavor = .redis, extraArguments: [String] = []) throws {
        guard let cli = Self.cli else { throw RedisServerError(Self.skipMessage) }
        nodes = try (0..<primaries).map { _ in
            try RedisServerProcess(flavor, extraArguments: ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                                                            "--cluster-node-timeout", "5000"] + extraArguments,
                                   port: Self.nodePort())
        }
        try CommandRunner.run(cli, ["--cluster", "create"] + nodes.map { "127.0.0.1:\($0.port)" } + ["--cluster-yes"], check: true)
        let joined = pollUntil(timeout: 20, interval: 0.05) {
            nodes.allSatisfy { ((try? $0.command("CLUSTER", "INFO")) ?? "").contains("cluster_state:ok") }
        }
        guard joined else { throw RedisServerError("the cluster did not reach cluster_state:ok") }
    }

    public func id(of node: RedisServerProcess) throws -> String {
        try node.command("CLUSTER", "MYID")
    }

    /// The node serving `slot` by its own account (`CLUSTER NODES`' `myself` line).
    public func owner(of slot: Int) -> RedisServerProcess? {
        nodes.first { node in
            let lines = ((try? node.command("CLUSTER", "NODES")) ?? "").split(whereSeparator: \.isNewline)
            guard let myself = lines.first(where: { $0.contains("myself") }) else { return false }
            return myself.split(separator: " ").dropFirst(8).contains { range in
                let bounds = range.split(separator: "-").compactMap { Int($0) }
                return bounds.count == 1 ? bounds[0] == slot : bounds.count == 2 && (bounds[0]...bounds[1]).contains(slot)
            }
        }
    }

    /// Moves `slot` from its owner to `target` as `redis-cli --cluster reshard` does, `batch`
    /// keys per `MIGRATE`, calling `between` after each batch (the slot is migrating then:
    /// some keys on each side). Returns how many keys moved.
    @discardableResult
    public func move(slot: Int, to target: RedisServerProcess, batch: Int = 1, between: () -> Void = {}) throws -> Int {
        guard let source = owner(of: slot), source !== target else { throw RedisServerError("slot \(slot) has no other owner") }
        let (sourceID, targetID) = (try id(of: source), try id(of: target))
        try expectOK(target.commands([["CLUSTER", "SETSLOT", String(slot), "IMPORTING", sourceID]]))
        try expectOK(source.commands([["CLUSTER", "SETSLOT", String(slot), "MIGRATING", targetID]]))
        var moved = 0
        while true {
            let listed = try source.commands([["CLUSTER", "GETKEYSINSLOT", String(slot), String(batch)]])[0]
            let keys = listed.split(separator: "\n").map(String.init)
            guard !keys.isEmpty else { break }
            let reply = try source.commands([["MIGRATE", "127.0.0.1", String(target.port), "", "0", "5000", "KEYS"] + keys])[0]
            guard reply == "OK" || reply == "NOKEY" else { throw RedisServerError("MIGRATE answered \(reply)") }
            moved += keys.count
            between()
        }
        // The target first, then the source: the order the cluster specification gives.
        for node in [target, source] + nodes.filter({ $0 !== target && $0 !== source }) {
            try expectOK(node.commands([["CLUSTER", "SETSLOT", String(slot), "NODE", targetID]]))
        }
        return moved
    }

    /// A free port whose cluster bus port (10000 higher) is free too, so at most 55535.
    static func nodePort() throws -> Int {
        for _ in 0..<200 {
            let port = try RedisServerProcess.freePort()
            if port <= 55_535, isFree(port + 10_000) { return port }
        }
        throw RedisServerError("no free port with a free cluster bus port")
    }

    private static func isFree(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }

    private func expectOK(_ replies: [String]) throws {
        guard replies.first == "OK" else { throw RedisServerError("expected OK, got \(replies)") }
    }
}
