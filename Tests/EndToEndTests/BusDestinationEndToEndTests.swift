import Foundation
import StoreRelayCore
import StoreRelayTestSupport
import Testing

/// `redis-stream` and `nats` destinations end to end (issue 29): the gateway built in this
/// process accepting signed notifications and delivering to a real `redis-server` and a real
/// `nats-server -js`, in single-node and cluster mode, read back with redis-cli and nats-py.
@Suite(.serialized, .enabled(if: RedisServerProcess.isAvailable && NATSServerProcess.isAvailable,
                             "redis-server, nats-server or nats-py is not installed (script/setup installs them)"))
struct BusDestinationEndToEndTests {
    let signer = testSigner

    /// The two bus destinations, routed for every event, with quick retries.
    func destinations(redis: RedisServerProcess, nats: NATSServerProcess, stream: String = "appstore:{environment}",
                      subject: String = "appstore.{environment}.{type}") -> String {
        """
        destination ledger redis-stream redis://127.0.0.1:\(redis.port)/0 {
            stream \(stream)
            backoff 50ms 300ms
            max-attempts 1000
            timeout 2s
        }
        destination audit nats \(nats.url) {
            subject \(subject)
            backoff 50ms 300ms
            max-attempts 1000
            timeout 2s
        }
        route * * * -> ledger, audit
        """
    }

    func post(_ gateway: Gateway, count: Int) throws -> [String] {
        var ids: [String] = []
        for _ in 0..<count {
            let uuid = UUID().uuidString.lowercased()
            let response = try gateway.post(json: try signer.body(uuid: uuid, type: "SUBSCRIBED", subtype: "RESUBSCRIBE"))
            #expect(response.status == 200)
            ids.append(uuid)
        }
        return ids
    }

    /// The event ids in the Redis stream and the NATS stream, in stream order.
    func delivered(_ redis: RedisServerProcess, key: String, _ nats: NATSServerProcess) -> (redis: [String], nats: [String]) {
        let entries = (try? BusReadBack.entries(redis, key)) ?? []
        let messages = (try? nats.messages(in: "EVENTS")) ?? []
        return (entries.compactMap { $0["id"] }, messages.compactMap { $0["headers"]?["Nats-Msg-Id"]?.stringValue })
    }

    @Test func everyEventOnceWithMetadataAcrossABrokerRestart() throws {
        let redis = try RedisServerProcess()
        let nats = try NATSServerProcess()
        try nats.addStream("EVENTS", subjects: ["appstore.>"])
        let gateway = try Gateway(config: Gateway.trustingConfig(destinations(redis: redis, nats: nats)),
                                  directory: try Gateway.trustingDirectory("storerelay-bus"))
        let before = try post(gateway, count: 5)
        #expect(pollUntil(timeout: 20) {
            let found = delivered(redis, key: "appstore:sandbox", nats)
            return Set(found.redis) == Set(before) && Set(found.nats) == Set(before)
        })

        // Both brokers go away; what is accepted meanwhile waits and is retried.
        redis.stop()
        nats.stop()
        let during = try post(gateway, count: 5)
        Thread.sleep(forTimeInterval: 1)
        try redis.restart()
        try nats.restart()
        let all = Set(before + during)
        #expect(pollUntil(timeout: 30) {
            let found = delivered(redis, key: "appstore:sandbox", nats)
            return Set(found.redis) == all && Set(found.nats) == all
        })
        let found = delivered(redis, key: "appstore:sandbox", nats)
        #expect(found.redis.count == 10 && found.nats.count == 10, "nothing lost, nothing twice: \(found)")
        #expect(gateway.deadLetters.isEmpty)

        // The metadata, as each bus carries it; the placeholders expanded.
        let entry = try #require(try BusReadBack.entries(redis, "appstore:sandbox").first)
        #expect(entry["type"] == "SUBSCRIBED" && entry["subtype"] == "RESUBSCRIBE" && entry["environment"] == "sandbox")
        #expect(entry["bundleId"] == "com.acme.journal" && entry["verified"] == "true")
        #expect(try JSONValue.parse(try #require(entry["event"]))["id"]?.stringValue == entry["id"])
        let message = try #require(try nats.messages(in: "EVENTS").first)
        #expect(message["subject"]?.stringValue == "appstore.sandbox.SUBSCRIBED")
        #expect(message["headers"]?["StoreRelay-Subtype"]?.stringValue == "RESUBSCRIBE")
        #expect(message["headers"]?["StoreRelay-Verified"]?.stringValue == "true")
        #expect(message["headers"]?["StoreRelay-Bundle-Id"]?.stringValue == "com.acme.journal")
    }

    @Test func refusedPublishesBecomeRejectedDeadLetters() throws {
        let redis = try RedisServerProcess(durable: false)
        try redis.command("SET", "appstore:sandbox", "a string, not a stream")
        let nats = try NATSServerProcess()
        try nats.addStream("EVENTS", subjects: ["appstore.>"], maxMessages: 1)
        let gateway = try Gateway(config: Gateway.trustingConfig(destinations(redis: redis, nats: nats)),
                                  directory: try Gateway.trustingDirectory("storerelay-bus-refused"))
        let first = try post(gateway, count: 1)
        // The NATS stream holds one message and discards new ones: the second is refused.
        #expect(pollUntil(timeout: 20) { delivered(redis, key: "x", nats).nats == first })
        let second = try post(gateway, count: 1)
        #expect(gateway.waitForDeadLetters { $0.count == 3 })
        let letters = gateway.deadLetters
        for letter in letters {
            #expect(letter["reason"]?.stringValue == "rejected" && letter["attempts"]?.arrayValue?.count == 1)
        }
        let ledger = letters.filter { $0["destination"]?.stringValue == "ledger" }
        #expect(Set(ledger.compactMap { $0["eventId"]?.stringValue }) == Set(first + second))
        #expect(ledger.allSatisfy { $0["detail"]?.stringValue?.contains("Redis refused XADD: WRONGTYPE") == true })
        let audit = try #require(letters.first { $0["destination"]?.stringValue == "audit" })
        #expect(audit["eventId"]?.stringValue == second[0])
        #expect(audit["detail"]?.stringValue?.contains("JetStream refused the message: maximum messages exceeded") == true)
    }

    @Test func aReplayedDeadLetterGoesBackToTheSameBus() throws {
        let redis = try RedisServerProcess(durable: false)
        try redis.command("SET", "appstore:sandbox", "a string, not a stream")
        let nats = try NATSServerProcess()
        let admin = try AdminGateway(try Gateway(config: Gateway.trustingConfig(destinations(redis: redis, nats: nats)),
                                                 directory: try Gateway.trustingDirectory("storerelay-bus-replay")))
        let ids = try post(admin.gateway, count: 1)
        #expect(admin.gateway.waitForDeadLetters { $0.count == 2 })
        // The operator fixes both buses, then replays the letters.
        try redis.command("DEL", "appstore:sandbox")
        try nats.addStream("EVENTS", subjects: ["appstore.>"])
        let letters = try #require(try admin.get("/api/dead-letters").json?["items"]?.arrayValue)
        #expect(letters.count == 2)
        for letter in letters {
            let replay = try admin.post("/api/dead-letters/\(try #require(letter["id"]?.stringValue))/replay")
            #expect(replay.status == 200 || replay.status == 202, "\(replay.body)")
        }
        #expect(pollUntil(timeout: 20) { delivered(redis, key: "appstore:sandbox", nats) == (ids, ids) })
        #expect(pollUntil(timeout: 20) { (try? admin.get("/api/dead-letters"))?.json?["items"]?.arrayValue?.isEmpty == true })
    }

    @Test func clusterModeDeliversToBothBuses() throws {
        let clusterServer = try RedisServerProcess()
        let redis = try RedisServerProcess(durable: false)
        let nats = try NATSServerProcess()
        try nats.addStream("EVENTS", subjects: ["appstore.>"])
        let config = Gateway.trustingConfig("""
            cluster redis://127.0.0.1:\(clusterServer.port) {
                instance-id a
            }
            \(destinations(redis: redis, nats: nats, stream: "events:{type}"))
            """)
        let gateway = try Gateway(config: config, directory: try Gateway.trustingDirectory("storerelay-bus-cluster"))
        let ids = try post(gateway, count: 6)
        #expect(pollUntil(timeout: 30) {
            let found = delivered(redis, key: "events:SUBSCRIBED", nats)
            return Set(found.redis) == Set(ids) && Set(found.nats) == Set(ids)
        })
        let found = delivered(redis, key: "events:SUBSCRIBED", nats)
        #expect(found.redis.count == 6 && found.nats.count == 6)
        #expect(gateway.deadLetters.isEmpty)
    }
}

/// Reading a Redis stream back as an operator would, with redis-cli.
enum BusReadBack {
    /// The stream's entries as field maps, from `redis-cli --json XRANGE key - +`.
    static func entries(_ server: RedisServerProcess, _ key: String) throws -> [[String: String]] {
        let output = try CommandRunner.run("redis-cli", ["-p", String(server.port), "--json", "XRANGE", key, "-", "+"], check: true).stdout
        guard let entries = try JSONValue.parse(output).arrayValue else { return [] }
        return entries.compactMap { entry in
            guard let fields = entry.arrayValue?.last?.arrayValue else { return nil }
            let texts = fields.compactMap(\.stringValue)
            return Dictionary(uniqueKeysWithValues: stride(from: 0, to: texts.count - 1, by: 2).map { (texts[$0], texts[$0 + 1]) })
        }
    }
}
