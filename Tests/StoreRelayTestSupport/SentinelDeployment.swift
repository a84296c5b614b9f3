import Foundation

/// A real Sentinel deployment on loopback: a primary and a replica (`valkey-server` by
/// default: it has WAITAOF, which `wait-replicas` needs), durable as cluster mode requires,
/// and three sentinels (`valkey-server FILE --sentinel`) monitoring the primary as `name`
/// with short timeouts, so a failover takes seconds.
public final class SentinelDeployment: @unchecked Sendable {
    // Invariant: set once in init, read-only after.
    public let primary: RedisServerProcess
    public let replica: RedisServerProcess
    public let sentinels: [RedisServerProcess]
    public let name: String

    /// A sentinel asks its instances every second; `down-after` this long unanswered, it
    /// calls the primary down, and a failover must finish within `failover-timeout`.
    public init(_ flavor: RedisServerProcess.Flavor = .valkey, name: String = "mymaster", downAfterMilliseconds: Int = 1_000) throws {
        self.name = name
        primary = try RedisServerProcess(flavor, extraArguments: ["--repl-diskless-sync-delay", "0"])
        replica = try RedisServerProcess(flavor, extraArguments: ["--replicaof", "127.0.0.1 \(primary.port)", "--repl-diskless-sync-delay", "0"])
        let primary = primary
        guard primary.waitForReplicas(1, appendOnly: flavor == .valkey) else { throw RedisServerError("the replica did not sync") }
        let configuration = """
            sentinel monitor \(name) 127.0.0.1 \(primary.port) 2
            sentinel down-after-milliseconds \(name) \(downAfterMilliseconds)
            sentinel failover-timeout \(name) 4000
            sentinel parallel-syncs \(name) 1

            """
        sentinels = try (0..<3).map { _ in
            try RedisServerProcess(flavor, extraArguments: ["--sentinel"], durable: false, configuration: configuration)
        }
        // A failover needs the sentinels to know the replica and each other.
        let replicaPort = String(replica.port)
        let ready = pollUntil(timeout: 20, interval: 0.1) { [sentinels] in
            sentinels.allSatisfy { sentinel in
                let replicas = (try? sentinel.command("SENTINEL", "REPLICAS", name)) ?? ""
                let peers = (try? sentinel.command("SENTINEL", "SENTINELS", name)) ?? ""
                return replicas.split(separator: "\n").contains { $0 == replicaPort }
                    && peers.split(separator: "\n").filter { $0 == "port" }.count >= 2
            }
        }
        guard ready else { throw RedisServerError("the sentinels did not discover the replica and each other") }
    }

    /// `sentinel://127.0.0.1:P1,127.0.0.1:P2,127.0.0.1:P3/NAME`
    public var url: String {
        "sentinel://" + sentinels.map { "127.0.0.1:\($0.port)" }.joined(separator: ",") + "/\(name)"
    }

    /// The port of the primary the first sentinel names now.
    public func namedPrimaryPort(by sentinel: Int = 0) -> Int? {
        let reply = (try? sentinels[sentinel].command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", name)) ?? ""
        return reply.split(separator: "\n").last.flatMap { Int($0) }
    }

    /// `SENTINEL FAILOVER NAME`: the replica is promoted without waiting for the primary to
    /// fail; the old primary is made its replica a few seconds later.
    public func failover() throws {
        let reply = try sentinels[0].command("SENTINEL", "FAILOVER", name)
        guard reply == "OK" else { throw RedisServerError("SENTINEL FAILOVER answered \(reply)") }
    }

    /// Whether every sentinel names the server on `port` as the primary.
    public func allName(port: Int) -> Bool {
        sentinels.indices.allSatisfy { namedPrimaryPort(by: $0) == port }
    }
}
