import Foundation
import Testing
@testable import StoreRelayDelivery
import StoreRelayCore
import StoreRelayTestSupport

/// The delivery engine (single-node) delivering to a real `redis-server` stream and a real
/// `nats-server -js` stream, read back with real clients: every event once with its metadata,
/// and a refusal dead-lettered as `rejected` with the broker's reason.
@Suite(.serialized) struct BusDeliveryTests {
    /// The stream's entries as field maps, from `XRANGE key - +` (redis-cli's view).
    static func entries(_ server: RedisServerProcess, _ key: String, password: String? = nil) throws -> [[String: String]] {
        let auth = password.map { ["--no-auth-warning", "-a", $0] } ?? []
        let output = try CommandRunner.run("redis-cli", ["-p", String(server.port)] + auth + ["--json", "XRANGE", key, "-", "+"],
                                           check: true).stdout
        guard let entries = try JSONValue.parse(output).arrayValue else { return [] }
        return entries.compactMap { entry in
            guard let fields = entry.arrayValue?.last?.arrayValue else { return nil }
            let texts = fields.compactMap(\.stringValue)
            return Dictionary(uniqueKeysWithValues: stride(from: 0, to: texts.count - 1, by: 2).map { (texts[$0], texts[$0 + 1]) })
        }
    }

    @Test(.enabled(if: RedisServerProcess.isAvailable, "redis-server is not installed"))
    func everyEventOnceInTheRedisStreamWithItsMetadata() throws {
        let server = try RedisServerProcess(durable: false)
        let harness = try ParkingHarness(routes: """
            destination ledger redis-stream redis://127.0.0.1:\(server.port)/0 {
                stream appstore:{environment}
                max-length 1000
                backoff 50ms 200ms
            }
            """, whole: 64)
        defer { harness.stop() }
        let accepted = try harness.accept(20, destinations: ["ledger"])
        #expect(pollUntil(timeout: 15) { (try? Self.entries(server, "appstore:sandbox").count) == 20 })
        let entries = try Self.entries(server, "appstore:sandbox")
        #expect(entries.compactMap { $0["id"] }.sorted() == accepted.map(\.id).sorted(), "every event once")
        for entry in entries {
            #expect(entry["type"] == "DID_RENEW" && entry["environment"] == "sandbox" && entry["bundleId"] == "com.acme.journal")
            #expect(entry["event"].flatMap { try? JSONValue.parse($0) }?["id"]?.stringValue == entry["id"])
        }
        #expect(harness.engine.deadLetters.count == 0)
    }

    @Test(.enabled(if: RedisServerProcess.isAvailable, "redis-server is not installed"))
    func overTLSWithThePasswordInTheURL() throws {
        let certificates = try TLSTestCertificates.shared()
        let tlsPort = try RedisServerProcess.freePort()
        let server = try RedisServerProcess(extraArguments: [
            "--tls-port", String(tlsPort), "--tls-cert-file", certificates.localhost.certificateFile,
            "--tls-key-file", certificates.localhost.privateKeyFile, "--tls-ca-cert-file", certificates.caFile,
            "--tls-auth-clients", "no", "--requirepass", "s3cret/@:",
        ], durable: false)
        let harness = try ParkingHarness(routes: """
            destination ledger redis-stream rediss://:s3cret%2F%40%3A@localhost:\(tlsPort)/3 {
                ca-file \(certificates.caFile)
                backoff 50ms 200ms
            }
            """, whole: 64)
        defer { harness.stop() }
        let accepted = try harness.accept(3, destinations: ["ledger"])
        let select = { () -> [String] in
            let output = (try? CommandRunner.run("redis-cli", ["-p", String(server.port), "--no-auth-warning", "-a", "s3cret/@:", "-n", "3",
                                                                "--json", "XRANGE", "appstore:events", "-", "+"]).stdout) ?? "[]"
            let entries = (try? JSONValue.parse(output).arrayValue) ?? []
            return entries.compactMap { $0.arrayValue?.last?.arrayValue?[1].stringValue }
        }
        #expect(pollUntil(timeout: 15) { select().sorted() == accepted.map(\.id).sorted() })
        #expect(harness.engine.deadLetters.count == 0)
    }

    @Test(.enabled(if: RedisServerProcess.isAvailable, "redis-server is not installed"))
    func aKeyOfTheWrongTypeIsARejectedDeadLetter() throws {
        let server = try RedisServerProcess(durable: false)
        try server.command("SET", "appstore:events", "not a stream")
        let harness = try ParkingHarness(routes: """
            destination ledger redis-stream redis://127.0.0.1:\(server.port)/0 {
                backoff 50ms 200ms
            }
            """, whole: 64)
        defer { harness.stop() }
        _ = try harness.accept(1, destinations: ["ledger"])
        #expect(pollUntil(timeout: 15) { harness.engine.deadLetters.count == 1 })
        let letter = try #require(harness.engine.deadLetters.list().items.first)
        #expect(letter.reason == .rejected && letter.attempts.count == 1)
        #expect(letter.detail == "the destination refused the message, which is not retried: "
            + "Redis refused XADD: WRONGTYPE Operation against a key holding the wrong kind of value")
    }

    @Test(.enabled(if: NATSServerProcess.isAvailable, "\(NATSServerProcess.skipMessage)"))
    func everyEventOnceInTheJetStreamWithItsHeaders() throws {
        let server = try NATSServerProcess(token: "t0ken")
        try server.addStream("EVENTS", subjects: ["appstore.>"])
        let harness = try ParkingHarness(routes: """
            destination audit nats \(server.url) {
                subject appstore.{environment}.{type}
                token t0ken
                backoff 50ms 200ms
            }
            """, whole: 64)
        defer { harness.stop() }
        let accepted = try harness.accept(20, destinations: ["audit"])
        #expect(pollUntil(timeout: 15) { (try? server.messages(in: "EVENTS").count) == 20 })
        let messages = try server.messages(in: "EVENTS")
        #expect(Set(messages.compactMap { $0["headers"]?["Nats-Msg-Id"]?.stringValue }) == Set(accepted.map(\.id)))
        for message in messages {
            #expect(message["subject"]?.stringValue == "appstore.sandbox.DID_RENEW")
            #expect(message["headers"]?["StoreRelay-Type"]?.stringValue == "DID_RENEW")
            #expect(message["headers"]?["StoreRelay-Environment"]?.stringValue == "sandbox")
            #expect(message["headers"]?["StoreRelay-Bundle-Id"]?.stringValue == "com.acme.journal")
            let body = message["data"]?.stringValue.flatMap { try? JSONValue.parse($0) }
            #expect(body?["id"]?.stringValue == message["headers"]?["Nats-Msg-Id"]?.stringValue)
        }
        #expect(harness.engine.deadLetters.count == 0)
    }

    @Test(.enabled(if: NATSServerProcess.isAvailable, "\(NATSServerProcess.skipMessage)"))
    func aSubjectWithoutAStreamIsARejectedDeadLetter() throws {
        let server = try NATSServerProcess()
        let harness = try ParkingHarness(routes: """
            destination audit nats \(server.url) {
                subject nowhere.{type}
                backoff 50ms 200ms
            }
            """, whole: 64)
        defer { harness.stop() }
        _ = try harness.accept(1, destinations: ["audit"])
        #expect(pollUntil(timeout: 15) { harness.engine.deadLetters.count == 1 })
        let letter = try #require(harness.engine.deadLetters.list().items.first)
        #expect(letter.reason == .rejected && letter.attempts.count == 1)
        #expect(letter.detail == "the destination refused the message, which is not retried: "
            + "no JetStream stream takes subject 'nowhere.DID_RENEW' (NATS 503 no responders)")
    }
}
