import Foundation
import StoreRelayCluster
import StoreRelayCore
import StoreRelayNet
import StoreRelayTestSupport
import Testing

/// One live process per instance id (issue 26, point 5), against a real `redis-server`:
/// every connection claims the id before it is used; a second process with the id is refused
/// while the first renews its claim, and gets in once the claim is released or has lapsed.
@Suite(.serialized, .enabled(if: RedisServerProcess.isAvailable, "redis-server is not installed (apt-get install redis-server)"))
struct InstanceClaimTests {
    let keys = ClusterKeys()

    /// A started client of `server` whose connections must hold `claim`.
    func client(_ server: RedisServerProcess, _ claim: InstanceClaim, credentials: String = "") throws -> RedisClient {
        var configuration = RedisConfiguration(url: try RedisURL.parse("redis://\(credentials)127.0.0.1:\(server.port)"))
        configuration.connectTimeout = .seconds(3)
        configuration.reconnectInitial = .milliseconds(20)
        configuration.reconnectMaximum = .milliseconds(200)
        let requirements = ServerRequirements()
        configuration.connectionChecks = requirements.checks
        configuration.acceptConnection = requirements.refusal
        claim.guardConnections(of: &configuration)
        let client = RedisClient(configuration: configuration)
        client.start()
        return client
    }

    @Test func aSecondProcessWithTheIdIsRefusedWhileTheFirstRenews() throws {
        let server = try RedisServerProcess()
        let first = InstanceClaim(instanceId: "relay-1")
        let holder = try client(server, first)
        defer { holder.shutdown() }
        #expect(pollUntil(timeout: 5) { holder.isConnected })
        #expect(reply(holder, "GET", keys.claim("relay-1"))?.string == first.token)

        let second = InstanceClaim(instanceId: "relay-1")
        #expect(first.token != second.token)
        let intruder = try client(server, second)
        defer { intruder.shutdown() }
        #expect(pollUntil(timeout: 5) { intruder.lastError != nil })
        #expect(!intruder.isConnected && second.isHeldElsewhere)
        let refusal = intruder.lastError?.message ?? ""
        #expect(intruder.lastError?.code == .refused && refusal.contains("instance-id relay-1 is in use by another instance"), "\(refusal)")
        #expect(refusal.contains(first.token), "names where the holder runs")

        // The holder renews, as its heartbeat does (every 5 s; every 2 s here): the second one
        // stops waiting long before the claim could lapse, and stays out.
        let renewing = Locked(true)
        let renewer = Thread {
            while renewing.current {
                _ = reply(holder, "EVAL", InstanceClaimTests.claimSource(first), "1", keys.claim("relay-1"), first.token, "15000")
                Thread.sleep(forTimeInterval: 2)
            }
        }
        renewer.start()
        defer { renewing.withLock { $0 = false } }
        let started = ContinuousClock.now
        second.awaitReleaseWaiting(by: intruder, timeout: .seconds(20))
        #expect(ContinuousClock.now - started < .seconds(8), "a renewal shows the holder is alive")
        #expect(!intruder.isConnected && intruder.lastError?.message.contains("it renews its claim") == true,
                "\(String(describing: intruder.lastError))")
    }

    /// A graceful stop gives the id back at once; a killed holder's claim lapses, and the
    /// process waiting for it gets in then.
    @Test func aReleasedOrLapsedClaimLetsTheNextProcessIn() throws {
        let server = try RedisServerProcess()
        let first = InstanceClaim(instanceId: "relay-2")
        let holder = try client(server, first)
        #expect(pollUntil(timeout: 5) { holder.isConnected })
        let second = InstanceClaim(instanceId: "relay-2")
        let next = try client(server, second)
        defer { next.shutdown() }
        #expect(pollUntil(timeout: 5) { second.isHeldElsewhere })
        // As `kill -9` leaves it: no renewal, no release; here it has 600 ms left to live.
        holder.shutdown()
        let raw = try clusterClient(server)
        defer { raw.shutdown() }
        #expect(pollUntil(timeout: 5) { raw.isConnected })
        #expect(reply(raw, "PEXPIRE", keys.claim("relay-2"), "600")?.integer == 1)
        let started = ContinuousClock.now
        second.awaitReleaseWaiting(by: next, timeout: .seconds(20))
        #expect(next.isConnected, "\(String(describing: next.lastError))")
        #expect(ContinuousClock.now - started < .seconds(5))
        #expect(reply(raw, "GET", keys.claim("relay-2"))?.string == second.token)

        // Released (a graceful stop of the second): a third takes the id at once.
        #expect(reply(raw, "EVAL", "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0",
                      "1", keys.claim("relay-2"), second.token)?.integer == 1)
        let third = InstanceClaim(instanceId: "relay-2")
        let after = try client(server, third)
        defer { after.shutdown() }
        #expect(pollUntil(timeout: 5) { after.isConnected })
    }

    /// A process that stalled past its claim's lifetime, and finds the id taken meanwhile,
    /// stops using the server: its renewal drops the connection, and no new one is accepted.
    @Test func aProcessThatLostItsClaimStopsUsingTheServer() throws {
        let server = try RedisServerProcess()
        let claim = InstanceClaim(instanceId: "relay-3")
        let stalled = try client(server, claim)
        defer { stalled.shutdown() }
        #expect(pollUntil(timeout: 5) { stalled.isConnected })
        #expect(reply(stalled, "SET", keys.claim("relay-3"), "elsewhere/42/newcomer", "PX", "15000")?.string == "OK")
        claim.renew(on: stalled, logger: .disabled)
        #expect(pollUntil(timeout: 5) { !stalled.isConnected })
        Thread.sleep(forTimeInterval: 0.5)
        #expect(!stalled.isConnected && stalled.lastError?.message.contains("elsewhere/42/newcomer") == true,
                "\(String(describing: stalled.lastError))")
    }

    /// A user whose ACL forbids scripts cannot claim its id, so it gets no connection.
    @Test func aServerThatRefusesTheClaimIsRefused() throws {
        let server = try RedisServerProcess(extraArguments: ["--user", "relay", "on", ">pw", "~*", "&*", "+@all", "-eval"])
        let claim = InstanceClaim(instanceId: "relay-4")
        let redis = try client(server, claim, credentials: "relay:pw@")
        defer { redis.shutdown() }
        #expect(pollUntil(timeout: 5) { redis.lastError != nil })
        #expect(!redis.isConnected && redis.lastError?.code == .refused)
        #expect(redis.lastError?.message.contains("the server refused the claim on instance-id relay-4 (NOPERM") == true,
                "\(String(describing: redis.lastError))")
    }

    /// The claim script as the connection check sends it (its source is the command's 2nd argument).
    static func claimSource(_ claim: InstanceClaim) -> String {
        String(decoding: claim.claimCommand.arguments[1], as: UTF8.self)
    }
}
