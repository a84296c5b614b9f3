import Foundation
import Testing
import StoreRelayCore
import StoreRelayTestSupport

/// `GET /api/events` on a real gateway (issue 28, point 1): notifications posted over HTTP,
/// delivered to one webhook and refused by another, then found by every id they carry,
/// filtered, paged, and found again after a restart.
@Suite("Event log end to end", .serialized)
struct EventLogEndToEndTests {
    let signer: NotificationSigner
    init() throws { signer = try NotificationSigner(authority: TestCertificateAuthority()) }

    private func config(_ sink: WebhookSink) -> String {
        Gateway.bareConfig("""
            trust-root ./test-root.pem
            event-log 7d
            \(webhookDestination("ok", sink.url("/ok")))
            \(webhookDestination("refusing", sink.url("/bad")))
            route * * * -> ok, refusing
            """)
    }

    private func items(_ admin: AdminGateway, _ query: String) throws -> [JSONValue] {
        let answer = try admin.get("/api/events?" + query)
        #expect(answer.status == 200, "\(query): \(answer.body)")
        return answer.json?["items"]?.arrayValue ?? []
    }

    private func states(_ item: JSONValue?) -> [String: String] {
        Dictionary(uniqueKeysWithValues: (item?["deliveries"]?.arrayValue ?? []).compactMap { delivery in
            delivery["destination"]?.stringValue.map { ($0, delivery["state"]?.stringValue ?? "") }
        })
    }

    @Test func eventsAreFoundByEveryIdFilteredPagedAndKeptAcrossARestart() throws {
        let sink = try WebhookSink(secret: testSigningSecret)
        let directory = try Gateway.directory(trusting: signer.authority, "storerelay-event-log")
        var gateway = try Gateway(config: config(sink), directory: directory)
        var admin = try AdminGateway(gateway)
        let ids = (0..<4).map { _ in UUID().uuidString.lowercased() }
        for (index, id) in ids.enumerated() {
            let body = try signer.body(uuid: id, type: index == 3 ? "REFUND" : "DID_RENEW",
                                       originalTransactionId: index < 2 ? "7000000000000001" : "7000000000000002")
            #expect(try gateway.post(json: body).status == 200)
        }
        // Pending first, then delivered to one and dead-lettered at the other.
        #expect(pollUntil(timeout: 30) {
            let all = (try? items(admin, "limit=10")) ?? []
            return all.count == 4 && all.allSatisfy { states($0) == ["ok": "delivered", "refusing": "dead-lettered"] }
        })
        let all = try items(admin, "")
        #expect(all.compactMap { $0["id"]?.stringValue } == ids.reversed(), "newest first")
        let first = try #require(all.last)
        #expect(first.objectValue?.members.map(\.0) == ["id", "receivedAt", "type", "subtype", "environment", "bundleId",
                                                        "originalTransactionId", "transactionId", "deliveries"])
        #expect(first["environment"] == "sandbox")
        #expect(first["bundleId"] == "com.acme.journal")

        // q: each id kind, exactly.
        #expect(try items(admin, "q=" + ids[1]).compactMap { $0["id"]?.stringValue } == [ids[1]])
        #expect(try items(admin, "q=7000000000000001").compactMap { $0["id"]?.stringValue } == [ids[1], ids[0]])
        let transactionId = try #require(first["transactionId"]?.stringValue)
        #expect(try items(admin, "q=" + transactionId).compactMap { $0["id"]?.stringValue } == [ids[0]])
        #expect(try items(admin, "q=700000000000000").isEmpty)

        // Filters.
        #expect(try items(admin, "type=REFUND").compactMap { $0["id"]?.stringValue } == [ids[3]])
        #expect(try items(admin, "app=com.acme.other").isEmpty)
        #expect(try items(admin, "environment=production").isEmpty)
        #expect(try items(admin, "state=dead-lettered").count == 4)
        #expect(try items(admin, "state=pending").isEmpty)
        #expect(try items(admin, "state=ok:dead-lettered").isEmpty)
        #expect(try items(admin, "state=delivered&destination=ok&q=7000000000000002").count == 2)
        #expect(try items(admin, "until=2000-01-01T00:00:00Z").isEmpty)
        #expect(try items(admin, "since=1h").count == 4)

        // Cursor paging.
        var seen: [String] = []
        var cursor: String?
        repeat {
            let answer = try admin.get("/api/events?limit=3" + (cursor.map { "&cursor=" + $0 } ?? ""))
            seen += answer.json?["items"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? []
            cursor = answer.json?["nextCursor"]?.stringValue
        } while cursor != nil
        #expect(seen == ids.reversed())

        // Bad parameters.
        for bad in ["state=lost", "environment=moon", "limit=0", "limit=501", "cursor=nope", "since=yesterday", "colour=red",
                    "q=a&q=b", "since=2026-01-02T00:00:00Z&until=2026-01-01T00:00:00Z"] {
            let answer = try admin.get("/api/events?" + bad)
            #expect(answer.status == 400, "\(bad)")
            #expect(answer.json?["message"]?.stringValue?.isEmpty == false)
        }

        // The command line: list (table and JSON, following cursors), show, refusals.
        let url = "http://127.0.0.1:\(admin.adminPort)"
        let json = try CommandRunner.storerelay(["events", "list", "--admin", url, "--token", admin.token, "--json",
                                                 "--q", "7000000000000001", "--limit", "1"])
        #expect(json.status == 0, "\(json.stderr)")
        #expect((try JSONValue.parse(json.stdout).arrayValue ?? []).compactMap { $0["id"]?.stringValue } == [ids[1]])
        let table = try CommandRunner.storerelay(["events", "list", "--admin", url, "--token", admin.token, "--state", "refusing:dead-lettered"])
        #expect(table.status == 0, "\(table.stderr)")
        #expect(table.stdout.contains("4 events") && table.stdout.contains("ok:delivered refusing:dead-lettered"), "\(table.stdout)")
        #expect(table.stdout.contains(ids[3]) && table.stdout.contains("REFUND"))
        let paged = try CommandRunner.storerelay(["events", "list", "--admin", url, "--token", admin.token, "--limit", "3"])
        #expect(paged.stdout.contains("3 events shown; more match"), "\(paged.stdout)")
        let show = try CommandRunner.storerelay(["events", "show", ids[0], "--admin", url, "--token", admin.token])
        #expect(show.status == 0, "\(show.stderr)")
        #expect(try JSONValue.parse(show.stdout)["id"]?.stringValue == ids[0])
        let missing = try CommandRunner.storerelay(["events", "show", "00000000-0000-4000-8000-000000000000", "--admin", url,
                                                    "--token", admin.token])
        #expect(missing.status == 1 && missing.stderr.contains("no event"), "\(missing.stderr)")
        let refused = try CommandRunner.storerelay(["events", "list", "--admin", url, "--token", admin.token, "--state", "lost"])
        #expect(refused.status == 1 && refused.stderr.contains("state is pending"), "\(refused.stderr)")
        let usage = try CommandRunner.storerelay(["events", "frobnicate", "--admin", url, "--token", admin.token])
        #expect(usage.status == 2)

        // A restart keeps the log.
        gateway.process.send(SIGTERM)
        #expect(gateway.process.waitForExit() == 0)
        gateway = try Gateway(config: config(sink), directory: directory)
        admin = try AdminGateway(gateway)
        let again = try items(admin, "")
        #expect(again.compactMap { $0["id"]?.stringValue } == ids.reversed())
        #expect(again.allSatisfy { states($0) == ["ok": "delivered", "refusing": "dead-lettered"] })
        // /api/events/{id} still answers, consistent with the list.
        let detail = try admin.get("/api/events/" + ids[2])
        #expect(detail.status == 200)
        #expect(states(detail.json) == ["ok": "delivered", "refusing": "dead-lettered"])
        gateway.process.send(SIGTERM)
        #expect(gateway.process.waitForExit() == 0)
    }

    /// A delivery is pending while its attempt runs and delivered once it answers; after a
    /// restart (the recent window empty) `/api/events/{id}` answers from the log.
    @Test func aDeliveryGoesFromPendingToDeliveredAndOutlivesTheRecentWindow() throws {
        let sink = try WebhookSink(secret: testSigningSecret)
        let directory = try Gateway.directory(trusting: signer.authority, "storerelay-event-log-pending")
        let config = Gateway.bareConfig("""
            trust-root ./test-root.pem
            \(webhookDestination("slow", sink.url("/slow/1500")))
            route * * * -> slow
            """)
        var gateway = try Gateway(config: config, directory: directory)
        var admin = try AdminGateway(gateway)
        let id = UUID().uuidString.lowercased()
        #expect(try gateway.post(json: try signer.body(uuid: id)).status == 200)
        #expect(pollUntil(timeout: 10) { (try? items(admin, "q=" + id))?.first.map(states) == ["slow": "pending"] })
        #expect(try items(admin, "state=pending").count == 1)
        #expect(pollUntil(timeout: 20) { (try? items(admin, "q=" + id))?.first.map(states) == ["slow": "delivered"] })
        #expect(try items(admin, "state=pending").isEmpty)
        gateway.process.send(SIGTERM)
        #expect(gateway.process.waitForExit() == 0)
        gateway = try Gateway(config: config, directory: directory)
        admin = try AdminGateway(gateway)
        let detail = try admin.get("/api/events/" + id)
        #expect(detail.status == 200, "\(detail.body)")
        #expect(detail.json?["deliveriesKnown"] == "states only")
        #expect(states(detail.json) == ["slow": "delivered"])
        gateway.process.send(SIGTERM)
        #expect(gateway.process.waitForExit() == 0)
    }

    /// Cluster mode serves the same API from the server: an event accepted by instance `a`
    /// is found through `b`, with the states `a`'s and `b`'s consumers wrote.
    @Test(.enabled(if: RedisServerProcess.isAvailable, "redis-server is not installed (apt-get install redis-server)"))
    func clusterModeServesTheSameListFromTheServer() throws {
        let server = try RedisServerProcess()
        let sink = try WebhookSink(secret: testSigningSecret)
        func start(_ instance: String) throws -> (Gateway, AdminGateway) {
            let directory = try Gateway.directory(trusting: signer.authority, "storerelay-event-log-\(instance)")
            let gateway = try Gateway(config: Gateway.bareConfig("""
                trust-root ./test-root.pem
                cluster redis://127.0.0.1:\(server.port) {
                    instance-id \(instance)
                }
                \(webhookDestination("ok", sink.url("/ok")))
                \(webhookDestination("refusing", sink.url("/bad")))
                route * * * -> ok, refusing
                """), directory: directory)
            return (gateway, try AdminGateway(gateway))
        }
        let (a, _) = try start("a")
        let (b, adminB) = try start("b")
        let ids = (0..<3).map { _ in UUID().uuidString.lowercased() }
        for (index, id) in ids.enumerated() {
            let body = try signer.body(uuid: id, originalTransactionId: index < 2 ? "7100000000000001" : "7100000000000002")
            #expect(try a.post(json: body).status == 200)
        }
        #expect(pollUntil(timeout: 30) {
            let all = (try? items(adminB, "")) ?? []
            return all.count == 3 && all.allSatisfy { states($0) == ["ok": "delivered", "refusing": "dead-lettered"] }
        })
        #expect(try items(adminB, "").compactMap { $0["id"]?.stringValue } == ids.reversed())
        #expect(try items(adminB, "q=7100000000000001").compactMap { $0["id"]?.stringValue } == [ids[1], ids[0]])
        let transactionId = try #require(try items(adminB, "q=" + ids[2]).first?["transactionId"]?.stringValue)
        #expect(try items(adminB, "q=" + transactionId).compactMap { $0["id"]?.stringValue } == [ids[2]])
        #expect(try items(adminB, "state=ok:delivered&limit=1").count == 1)
        #expect(try adminB.get("/api/events?state=lost").status == 400)
        var seen: [String] = []
        var cursor: String?
        repeat {
            let answer = try adminB.get("/api/events?limit=2" + (cursor.map { "&cursor=" + $0 } ?? ""))
            seen += answer.json?["items"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? []
            cursor = answer.json?["nextCursor"]?.stringValue
        } while cursor != nil
        #expect(seen == ids.reversed())
        for gateway in [a, b] {
            gateway.process.send(SIGTERM)
            #expect(gateway.process.waitForExit() == 0)
        }
    }
}
