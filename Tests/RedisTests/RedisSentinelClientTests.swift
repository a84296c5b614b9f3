import Dispatch
import Foundation
import StoreRelayCore
@testable import StoreRelayNet
import StoreRelayTestSupport
import Testing

/// The client behind real sentinels (`valkey-server FILE --sentinel`) watching a real primary
/// and replica: it connects where the sentinels say, checks ROLE, follows a failover within
/// about a second, and leaves a primary the sentinels no longer name.
@Suite(.serialized, .enabled(if: RedisServerProcess.isValkeyAvailable, Comment(rawValue: RedisServerProcess.valkeySkipMessage)))
struct RedisSentinelClientTests {
    let deployment: SentinelDeployment

    init() throws {
        deployment = try SentinelDeployment()
    }

    func client(_ url: String) throws -> RedisClient {
        let (redisURL, topology) = try RedisTopology.parse(url)
        var configuration = RedisConfiguration(url: redisURL)
        configuration.topology = topology
        configuration.connectTimeout = .seconds(2)
        configuration.commandTimeout = .seconds(2)
        configuration.reconnectInitial = .milliseconds(20)
        configuration.reconnectMaximum = .milliseconds(200)
        configuration.sentinelCheckInterval = .milliseconds(300)
        let client = RedisClient(configuration: configuration)
        client.start()
        return client
    }

    @Test func followsAFailoverWithinSeconds() async throws {
        let redis = try client(deployment.url)
        defer { redis.shutdown() }
        try await waitUntil { redis.isConnected }
        #expect(redis.connectedNode?.port == UInt16(deployment.primary.port))
        #expect(try await redis.reply(RESPCommand("SET", "before", "1")) == .simpleString("OK"))

        try deployment.failover()
        let started = Date()
        try await waitUntil(timeout: 15) { redis.connectedNode?.port == UInt16(self.deployment.replica.port) }
        let followedAfter = Date().timeIntervalSince(started)
        // The old primary stays `master` for seconds after the switch (until a sentinel
        // reconfigures it): the client left it because the sentinels named another.
        let oldRole = try deployment.primary.command("ROLE").split(separator: "\n").first
        #expect(followedAfter < 8, "followed after \(followedAfter) s")
        #expect(try await redis.reply(RESPCommand("GET", "before")).string == "1", "the promoted replica had it")
        #expect(try await redis.reply(RESPCommand("SET", "after", "2")) == .simpleString("OK"))
        #expect(try deployment.replica.command("GET", "after") == "2", "written on the new primary (old one: \(oldRole ?? "?"))")
    }

    /// The primary killed: the client reconnects, asks the sentinels (still naming the dead
    /// one until they agree it is down), and connects to the replica they promote.
    @Test func followsTheSentinelsWhenThePrimaryDies() async throws {
        let redis = try client(deployment.url)
        defer { redis.shutdown() }
        try await waitUntil { redis.isConnected }
        #expect(try await redis.reply(RESPCommand("SET", "before", "1")) == .simpleString("OK"))
        #expect(deployment.primary.waitForReplicas(1, appendOnly: true), "the replica has it")
        deployment.primary.stop()
        try await waitUntil(timeout: 20) { redis.connectedNode?.port == UInt16(self.deployment.replica.port) }
        #expect(try await redis.reply(RESPCommand("GET", "before")).string == "1")
        #expect(try await redis.reply(RESPCommand("SET", "after", "2")) == .simpleString("OK"))
    }

    @Test func aPrimaryTheSentinelsNoLongerNameIsLeft() async throws {
        let redis = try client(deployment.url)
        defer { redis.shutdown() }
        try await waitUntil { redis.isConnected }
        // Another primary, and the sentinels told to watch it under the same name: the old
        // one is still up and still a primary, yet no sentinel names it.
        let other = try RedisServerProcess(.valkey)
        for sentinel in deployment.sentinels {
            #expect(try sentinel.command("SENTINEL", "REMOVE", deployment.name) == "OK")
            #expect(try sentinel.command("SENTINEL", "MONITOR", deployment.name, "127.0.0.1", String(other.port), "2") == "OK")
        }
        try await waitUntil(timeout: 10) { redis.connectedNode?.port == UInt16(other.port) }
        #expect(try await redis.reply(RESPCommand("SET", "moved", "1")) == .simpleString("OK"))
        #expect(try other.command("GET", "moved") == "1")
        #expect(try deployment.primary.command("ROLE").hasPrefix("master"), "the old one never stopped being a primary")
    }

    @Test func aReplicaNamedAsThePrimaryIsRefused() async throws {
        for sentinel in deployment.sentinels {
            #expect(try sentinel.command("SENTINEL", "MONITOR", "wrong", "127.0.0.1", String(deployment.replica.port), "2") == "OK")
        }
        let redis = try client(deployment.url.replacingOccurrences(of: "/\(deployment.name)", with: "/wrong"))
        defer { redis.shutdown() }
        try await waitUntil { redis.lastError != nil }
        try await Task.sleep(for: .milliseconds(500))
        #expect(!redis.isConnected)
        #expect(redis.lastError?.message.contains("is a replica, not the primary") == true, "\(String(describing: redis.lastError))")
    }

    @Test func noSentinelKnowingTheNameIsAnUnavailableServer() async throws {
        let redis = try client(deployment.url.replacingOccurrences(of: "/\(deployment.name)", with: "/unknown"))
        defer { redis.shutdown() }
        try await waitUntil { redis.lastError != nil }
        #expect(!redis.isConnected)
        #expect(redis.lastError?.code == .unavailable)
        #expect(redis.lastError?.message.contains("monitor no primary named 'unknown'") == true, "\(String(describing: redis.lastError))")
        #expect(await redis.failure(RESPCommand("PING"))?.code == .unavailable, "commands fail at once")
    }
}
