import Foundation
import Testing
import StoreRelayCore
import StoreRelayCrypto
import StoreRelayTestSupport

/// A bulk replay is recorded before it starts and resumes after a crash (issue 13, point 3):
/// `kill -9` in the middle of replaying 1,000 dead letters neither loses the replay nor
/// carries it out twice.
@Suite("Durable bulk replays", .serialized)
struct DurableReplayTests {
    @Test func killNineInTheMiddleOfAThousandLetterReplayLosesAndRepeatsNothing() throws {
        let signer = try NotificationSigner(authority: TestCertificateAuthority())
        let sink = try WebhookSink(secret: testSigningSecret)
        let directory = try Gateway.directory(trusting: signer.authority, "storerelay-replay")
        func config(routed: Bool) -> String {
            Gateway.bareConfig("""
                trust-root ./test-root.pem
                \(webhookDestination("hook", sink.url("/slow/10"), options: "concurrency 4"))
                route * * \(routed ? "*" : "REFUND") -> hook
                """)
        }
        // 1,000 notifications no route takes: 1,000 dead letters, `unrouted`.
        let gateway = try Gateway(config: config(routed: false), directory: directory, host: .childProcess)
        // Posted over 8 connections at once, so the journal's group commits take several each.
        let ids = (0..<1_000).map { _ in UUID().uuidString.lowercased() }
        let bodies = try ids.map { try signer.body(uuid: $0) }
        let accepted = Locked(0)
        let port = gateway.port
        DispatchQueue.concurrentPerform(iterations: 8) { lane in
            guard let client = try? RawHTTPClient(port: port, timeout: 20) else { return }
            for index in stride(from: lane, to: bodies.count, by: 8) {
                let request = RawHTTPClient.request("POST", Gateway.path, headers: [("Content-Type", "application/json")],
                                                    body: bodies[index])
                guard (try? client.send(request)) != nil, (try? client.readResponse())?.status == 200 else { continue }
                accepted.withLock { $0 += 1 }
            }
        }
        #expect(accepted.current == 1_000)
        #expect(gateway.waitForDeadLetterCount(timeout: 60) { $0 == 1_000 })

        // Now routed to a slow destination: 4 at a time, 10 ms each.
        try config(routed: true).write(to: gateway.process.configPath, atomically: true, encoding: .utf8)
        gateway.process.send(SIGHUP)
        #expect(gateway.process.waitForLog { $0["message"]?.stringValue == "configuration reloaded" } != nil)
        let adminPort = try gateway.process.waitForPort(listener: "admin")
        let token = try String(contentsOf: directory.appendingPathComponent("data/admin.token"), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let started = try Curl.post("http://127.0.0.1:\(adminPort)/api/dead-letters/replay", json: "{}",
                                    headers: ["Authorization: Bearer \(token)"])
        #expect(started.json?["replayed"]?.int64Value == 1_000)
        let replays = directory.appendingPathComponent("data/replays")
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: replays.path)) ?? []).count == 1, "the replay was not recorded")

        // Some have been delivered again; then the gateway dies.
        #expect(sink.waitFor(timeout: 30) { $0.filter { $0["path"]?.stringValue == "/slow/10" }.count >= 100 })
        gateway.process.send(SIGKILL)
        _ = gateway.process.waitForExit()
        let beforeCrash = sink.requests(path: "/slow/10").count
        // The letters still there at the kill: what the resumed replay may send again.
        let letterFiles = Set(((try? FileManager.default.contentsOfDirectory(
            atPath: directory.appendingPathComponent("data/dead-letters").path)) ?? []).filter { $0.hasSuffix(".json") })
        #expect(beforeCrash < 1_000, "the replay finished before the crash; the test proves nothing")

        // The restart resumes the replay: every letter is delivered, then the record goes.
        let restarted = try Gateway(config: config(routed: true), directory: directory)
        #expect(restarted.process.waitForLog { $0["message"]?.stringValue == "bulk replay resumed" } != nil)
        #expect(restarted.waitForDeadLetterCount(timeout: 90) { $0 == 0 }, "dead letters left: \(restarted.deadLetterFileCount)")
        let delivered = sink.requests(path: "/slow/10").compactMap { $0["headers"]?["webhook-id"]?.stringValue }
        #expect(Set(delivered) == Set(ids), "a replayed letter was lost")
        // At least once: only a letter still there at the kill (in flight, or delivered but
        // not yet resolved) is sent twice; never one the replay had finished with.
        let counts = delivered.reduce(into: [:]) { $0[$1, default: 0] += 1 }
        for (id, count) in counts where count > 1 {
            // The letters are `unrouted`: of no destination.
            let file = DeadLetterIDs.id(eventId: id, destination: "") + ".json"
            #expect(letterFiles.contains(file), "\(id) was sent again although its letter was resolved before the kill")
        }
        #expect(delivered.count - ids.count < letterFiles.count, "more sent twice than were left at the kill")
        #expect(restarted.process.waitForLog { $0["message"]?.stringValue == "bulk replay finished" } != nil)
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: replays.path)) ?? []).isEmpty)
    }
}

/// A dead letter's id as SPEC defines it: `dl-` and the first 32 hex digits of the SHA-256 of
/// `<event id>\n<destination>`, worked out here to find its file.
enum DeadLetterIDs {
    static func id(eventId: String, destination: String) -> String {
        "dl-" + SHA256.hexHash(Array("\(eventId)\n\(destination)".utf8)).prefix(32)
    }
}
