import StoreRelayCluster
import StoreRelayCore
import StoreRelayNet
import StoreRelayTestSupport
import Testing

/// What a new connection checks (issue 26): a server that can evict keys is refused, and so
/// is `wait-replicas` on a server without WAITAOF, each in one sentence naming what to change.
@Suite(.serialized, .enabled(if: RedisServerProcess.isAvailable, "redis-server is not installed (apt-get install redis-server)"))
struct ServerRequirementsTests {
    /// Every evicting policy is refused: `allkeys-*` evicts events and dead letters,
    /// `volatile-*` the dedupe markers (they have a TTL). `require-noeviction no` waives it.
    @Test(arguments: ["allkeys-lru", "allkeys-lfu", "allkeys-random", "volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl"])
    func anEvictingServerIsRefused(policy: String) throws {
        let server = try RedisServerProcess(extraArguments: ["--maxmemory-policy", policy])
        let refused = try clusterClient(server)
        defer { refused.shutdown() }
        #expect(pollUntil(timeout: 5, interval: 0.01) { refused.lastError != nil })
        let message = refused.lastError?.message ?? ""
        #expect(refused.lastError?.code == .refused && !refused.isConnected)
        #expect(message.contains("maxmemory-policy \(policy)") && message.contains("needs maxmemory-policy noeviction")
                && message.contains("require-noeviction no"), "\(message)")

        let waived = try clusterClient(server, requirements: ServerRequirements(durability: ServerDurability(requireNoEviction: false)))
        defer { waived.shutdown() }
        #expect(pollUntil(timeout: 5, interval: 0.01) { waived.isConnected })
    }

    /// Redis 7.0 has no WAITAOF: `wait-replicas` is refused at connect, not at the first
    /// notification.
    @Test(.enabled(if: !RedisServerProcess.redisHasWAITAOF, "the installed redis-server has WAITAOF"))
    func waitReplicasIsRefusedWithoutWAITAOF() throws {
        let server = try RedisServerProcess()
        let refused = try clusterClient(server, requirements: ServerRequirements(waitReplicas: 2))
        defer { refused.shutdown() }
        #expect(pollUntil(timeout: 5, interval: 0.01) { refused.lastError != nil })
        let message = refused.lastError?.message ?? ""
        #expect(message.hasPrefix("wait-replicas 2 needs WAITAOF, which this server does not have")
                && message.contains("Redis 7.2 or newer, or Valkey"), "\(message)")
    }

    @Test(.enabled(if: RedisServerProcess.isValkeyAvailable, Comment(rawValue: RedisServerProcess.valkeySkipMessage)))
    func waitReplicasIsAcceptedWithWAITAOF() throws {
        let server = try RedisServerProcess(.valkey)
        let accepted = try clusterClient(server, requirements: ServerRequirements(waitReplicas: 1))
        defer { accepted.shutdown() }
        #expect(pollUntil(timeout: 5, interval: 0.01) { accepted.isConnected }, "\(String(describing: accepted.lastError))")
    }

    /// A server that forbids CONFIG is refused with the option that waives the check named;
    /// one that cannot WAITAOF for want of an append-only file says so.
    @Test func refusalsNameTheOptionToChange() {
        let forbidden = RESPValue.error("NOPERM this user has no permissions to run the 'config|get' command")
        let aofWaived = ServerRequirements(durability: ServerDurability(requireAOF: false))
        #expect(aofWaived.checks.count == 1)
        #expect(aofWaived.refusal([forbidden])?.contains("`require-noeviction no`") == true)
        #expect(aofWaived.refusal([.array([.bulkString(Array("maxmemory-policy".utf8)), .bulkString(Array("noeviction".utf8))])]) == nil)
        let nothing = ServerRequirements(durability: ServerDurability(requireAOF: false, requireNoEviction: false))
        #expect(nothing.isEmpty)
        let noAOF = ServerRequirements(durability: ServerDurability(requireAOF: false, requireNoEviction: false), waitReplicas: 1)
        let refusal = noAOF.refusal([.error("ERR WAITAOF cannot be used when numlocal is set but appendonly is disabled.")])
        #expect(refusal?.hasPrefix("wait-replicas 1 needs WAITAOF, which this server refused") == true, "\(String(describing: refusal))")
        #expect(noAOF.refusal([.array([.integer(1), .integer(0)])]) == nil)
    }
}
