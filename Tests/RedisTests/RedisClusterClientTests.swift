import Dispatch
import Foundation
import StoreRelayCore
@testable import StoreRelayNet
import StoreRelayTestSupport
import Testing

/// The client in a real 3-primary Redis Cluster (`redis-server --cluster-enabled yes`, joined
/// by `redis-cli --cluster create`): it finds the primary of its slot from any seed, follows
/// ASK while the slot migrates and MOVED once it has, scripts included.
@Suite(.serialized, .enabled(if: RedisClusterProcesses.isAvailable, Comment(rawValue: RedisClusterProcesses.skipMessage)))
struct RedisClusterClientTests {
    static let tag = "{storerelay}"
    static let slot = RedisHashSlot.of(tag)

    let cluster: RedisClusterProcesses

    init() throws {
        cluster = try RedisClusterProcesses()
    }

    func client(seeds: [RedisServerProcess]) throws -> RedisClient {
        try client(seeds: seeds.map { "127.0.0.1:\($0.port)" })
    }

    func client(seeds: [String]) throws -> RedisClient {
        let url = "redis-cluster://" + seeds.joined(separator: ",")
        let (redisURL, topology) = try RedisTopology.parse(url)
        var configuration = RedisConfiguration(url: redisURL)
        configuration.topology = topology
        configuration.slotKey = Self.tag
        configuration.connectTimeout = .seconds(3)
        configuration.commandTimeout = .seconds(3)
        configuration.reconnectInitial = .milliseconds(20)
        configuration.reconnectMaximum = .milliseconds(200)
        let client = RedisClient(configuration: configuration)
        client.start()
        return client
    }

    @Test func anySeedLeadsToThePrimaryOfTheSlot() async throws {
        let owner = try #require(cluster.owner(of: Self.slot))
        let others = cluster.nodes.filter { $0 !== owner }
        // A seed that is down first: the next one answers.
        let down = try RedisServerProcess.freePort()
        let client = try client(seeds: ["127.0.0.1:\(down)", "127.0.0.1:\(others[0].port)"])
        defer { client.shutdown() }
        try await waitUntil { client.isConnected }
        #expect(client.connectedNode?.port == UInt16(owner.port), "connected to \(String(describing: client.connectedNode))")
        #expect(try await client.reply(RESPCommand("SET", "\(Self.tag):a", "1")) == .simpleString("OK"))
        #expect(try owner.command("GET", "\(Self.tag):a") == "1", "written on the owner")
        #expect(client.server == "redis-cluster://127.0.0.1:\(down),127.0.0.1:\(others[0].port)")
    }

    @Test func asksDuringAMigrationAndMovesAfterIt() async throws {
        let source = try #require(cluster.owner(of: Self.slot))
        let target = try #require(cluster.nodes.first { $0 !== source })
        let redis = try client(seeds: cluster.nodes)
        defer { redis.shutdown() }
        try await waitUntil { redis.isConnected }
        for index in 0..<6 { _ = try await redis.reply(RESPCommand("SET", "\(Self.tag):k\(index)", "v\(index)")) }
        let script = RedisScript(source: "return redis.call('GET', KEYS[1])")

        var checkedMidway = false
        try cluster.move(slot: Self.slot, to: target, batch: 2) {
            guard !checkedMidway else { return }
            checkedMidway = true
            // Two keys are on the target now: reads of them are ASKed there, a new key is
            // created there, and a key still here is served here.
            let moved = ((try? target.command("KEYS", "*")) ?? "").split(separator: "\n").map(String.init)
            #expect(moved.count == 2, "\(moved)")
            let movedKey = moved[0]
            let value = Self.blocking { redis.send(RESPCommand("GET", movedKey), completion: $0) }
            #expect(value?.string == "v" + movedKey.dropFirst("\(Self.tag):k".count), "ASK followed: \(String(describing: value))")
            let created = Self.blocking { redis.send(RESPCommand("SET", "\(Self.tag):new", "n"), completion: $0) }
            #expect(created == .simpleString("OK"))
            let onTarget = try? target.commands([["ASKING"], ["GET", "\(Self.tag):new"]])
            #expect(onTarget?.last == "n", "created on the importing node")
            let evaluated = Self.blocking { redis.evaluate(script, keys: [movedKey], arguments: [], completion: $0) }
            #expect(evaluated?.string?.hasPrefix("v") == true, "a script ASKed there too: \(String(describing: evaluated))")
            #expect(redis.connectedNode?.port == UInt16(source.port), "ASK moves nothing")
        }
        #expect(checkedMidway)
        // Migrated: the old owner answers MOVED; the command is sent to the new one, and the
        // client reconnects there.
        #expect(try await redis.reply(RESPCommand("GET", "\(Self.tag):k5")).string == "v5")
        try await waitUntil { redis.connectedNode?.port == UInt16(target.port) }
        #expect(try await redis.reply(RESPCommand("INCR", "\(Self.tag):n")) == .integer(1))
        #expect(try target.command("GET", "\(Self.tag):n") == "1")
        // A script the new owner never loaded, EVALSHA first: NOSCRIPT, loaded, run.
        let counter = RedisScript(source: "return redis.call('INCR', KEYS[1])")
        let counted = Self.blocking { redis.evaluate(counter, keys: ["\(Self.tag):n"], arguments: [], completion: $0) }
        #expect(counted == .integer(2))
    }

    @Test func aScriptMovedAwayIsSentWholeToTheNewOwner() async throws {
        let source = try #require(cluster.owner(of: Self.slot))
        let target = try #require(cluster.nodes.first { $0 !== source })
        let redis = try client(seeds: [source])
        defer { redis.shutdown() }
        try await waitUntil { redis.isConnected }
        let script = RedisScript(source: "return redis.call('INCRBY', KEYS[1], ARGV[1])")
        #expect(Self.blocking { redis.evaluate(script, keys: ["\(Self.tag):s"], arguments: [Array("5".utf8)], completion: $0) } == .integer(5))
        try cluster.move(slot: Self.slot, to: target)
        // EVALSHA reaches the old owner, MOVED; the redirect sends EVAL (the target lacks it).
        #expect(Self.blocking { redis.evaluate(script, keys: ["\(Self.tag):s"], arguments: [Array("2".utf8)], completion: $0) } == .integer(7))
        #expect(try target.command("GET", "\(Self.tag):s") == "7")
    }

    /// An ACL user without ROLE (no `@admin`): the primary cannot be checked, so the client
    /// says so and uses it.
    @Test func aUserWithoutRoleConnectsWithAWarning() async throws {
        let restricted = try RedisClusterProcesses(extraArguments: ["--user", "relay", "on", ">relay-pw", "~*", "&*", "+@all", "-role"])
        let owner = try #require(restricted.owner(of: Self.slot))
        let (url, topology) = try RedisTopology.parse("redis-cluster://relay:relay-pw@127.0.0.1:\(restricted.nodes[0].port)")
        var configuration = RedisConfiguration(url: url)
        configuration.topology = topology
        configuration.slotKey = Self.tag
        let lines = LogLines()
        configuration.logger = Logger(label: "test", level: .info, sink: lines)
        let redis = RedisClient(configuration: configuration)
        redis.start()
        defer { redis.shutdown() }
        try await waitUntil { redis.isConnected }
        #expect(redis.connectedNode?.port == UInt16(owner.port))
        #expect(lines.current.contains { $0.contains("redis ROLE refused") && $0.contains("NOPERM") }, "\(lines.current)")
    }

    /// Waits for a completion-style call (from a callback that must not be async).
    static func blocking(_ body: (@escaping @Sendable (Result<RESPValue, RedisError>) -> Void) -> Void) -> RESPValue? {
        let reply = Locked<RESPValue?>(nil)
        let done = DispatchSemaphore(value: 0)
        body { result in
            reply.withLock { $0 = try? result.get() }
            done.signal()
        }
        _ = done.wait(timeout: .now() + 10)
        return reply.current
    }
}

/// Keeps every line logged.
final class LogLines: LogSink, Sendable {
    private let lines = Locked<[String]>([])
    func write(line: String) { lines.withLock { $0.append(line) } }
    var current: [String] { lines.current }
}
