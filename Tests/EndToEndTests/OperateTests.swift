import Foundation
import Testing
import StoreRelayCore
import StoreRelayTestSupport

/// The admin listener of a real gateway: API, replay, page, metrics, CLI and logs.
@Suite("Operate end to end", .serialized)
struct OperateTests {
    let signer: NotificationSigner
    init() throws { signer = try NotificationSigner(authority: TestCertificateAuthority()) }

    private func gateway(_ body: String) throws -> (Gateway, adminPort: Int, token: String) {
        let directory = try Gateway.directory(trusting: signer.authority, "storerelay-operate")
        let gateway = try Gateway(config: Gateway.bareConfig("trust-root ./test-root.pem\nshared-secret s3cret-do-not-log\n" + body),
                                  directory: directory)
        let adminPort = try gateway.process.waitForPort(listener: "admin")
        let tokenFile = directory.appendingPathComponent("data/admin.token")
        let attributes = try FileManager.default.attributesOfItem(atPath: tokenFile.path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let token = try String(contentsOf: tokenFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        return (gateway, adminPort, token)
    }

    /// Finding a notification by what the operator has in hand (issue 13, point 1): a
    /// subscription's events with each delivery's state, and its dead letters through the API
    /// and `storerelay dlq list`.
    @Test func aSubscriptionsEventsAndDeadLettersAreFoundByItsIds() throws {
        let sink = try WebhookSink(secret: testSigningSecret)
        let (gateway, adminPort, token) = try self.gateway("""
            \(webhookDestination("ok", sink.url("/ok")))
            \(webhookDestination("refusing", sink.url("/bad")))
            route * * * -> ok, refusing
            """)
        let ids = (0..<3).map { _ in UUID().uuidString.lowercased() }
        for id in ids { #expect(try gateway.post(json: try signer.body(uuid: id)).status == 200) }
        #expect(gateway.waitForDeadLetters { $0.count == 3 })
        let admin = "http://127.0.0.1:\(adminPort)"
        let auth = ["Authorization: Bearer \(token)"]

        // NotificationSigner's transactions all belong to subscription 2000000000000001. The
        // deliveries to `ok` run beside the dead-lettering: wait until none is pending.
        var items: [JSONValue] = []
        let deadline = Date().addingTimeInterval(20)
        repeat {
            let events = try Curl.get(admin + "/api/events?originalTransactionId=2000000000000001", headers: auth)
            #expect(events.status == 200)
            items = events.json?["items"]?.arrayValue ?? []
            let pending = items.contains { ($0["deliveries"]?.arrayValue ?? []).contains { $0["state"] == "pending" } }
            if !pending && items.count == 3 { break }
            Thread.sleep(forTimeInterval: 0.05)
        } while Date() < deadline
        #expect(Set(items.compactMap { $0["id"]?.stringValue }) == Set(ids))
        for item in items {
            let states = Dictionary(uniqueKeysWithValues: (item["deliveries"]?.arrayValue ?? []).compactMap { delivery in
                delivery["destination"]?.stringValue.map { ($0, delivery["state"]?.stringValue ?? "") }
            })
            #expect(states == ["ok": "delivered", "refusing": "dead-lettered"])
        }
        let none = try Curl.get(admin + "/api/events?originalTransactionId=999", headers: auth)
        #expect(none.json?["items"]?.arrayValue?.isEmpty == true)

        let byEvent = try Curl.get(admin + "/api/dead-letters?eventId=" + ids[1], headers: auth)
        #expect(byEvent.json?["items"]?.arrayValue?.compactMap { $0["eventId"]?.stringValue } == [ids[1]])

        let cli = try CommandRunner.storerelay(["dlq", "list", "--admin", admin, "--token", token, "--json",
                                                "--event-id", ids[2], "--since", "1h"])
        #expect(cli.status == 0, "\(cli.stderr)")
        let listed = try JSONValue.parse(cli.stdout).arrayValue ?? []
        #expect(listed.compactMap { $0["eventId"]?.stringValue } == [ids[2]])
        let table = try CommandRunner.storerelay(["dlq", "list", "--admin", admin, "--token", token,
                                                  "--original-transaction-id", "2000000000000001", "--type", "DID_RENEW"])
        #expect(table.stdout.contains("3 dead letters"), "\(table.stdout)")
        let refused = try CommandRunner.storerelay(["dlq", "list", "--admin", admin, "--token", token, "--since", "soon"])
        #expect(refused.status == 1 && refused.stderr.contains("since takes a time"), "\(refused.stderr)")
        let misplaced = try CommandRunner.storerelay(["dlq", "replay", "--all", "--event-id", ids[0], "--admin", admin,
                                                      "--token", token])
        #expect(misplaced.status == 2 && misplaced.stderr.contains("--event-id does not apply"), "\(misplaced.stderr)")
    }

    /// A page login survives a restart of the gateway (issue 13, point 2): the session is
    /// kept in data/admin.sessions, 0600, holding no session id.
    @Test func aPageLoginSurvivesARestart() throws {
        let (gateway, adminPort, token) = try self.gateway("destination all file ./data/queues/all\nroute * * * -> all")
        let login = try CommandRunner.run("curl", ["-sS", "-i", "--data-binary", "token=" + token,
                                                   "http://127.0.0.1:\(adminPort)/login"])
        let cookieLine = try #require(login.stdout.components(separatedBy: "\r\n").first { $0.lowercased().hasPrefix("set-cookie:") })
        let cookie = try #require(cookieLine.dropFirst("set-cookie:".count).split(separator: ";").first).trimmingCharacters(in: .whitespaces)
        let sessions = gateway.directory.appendingPathComponent("data/admin.sessions")
        #expect((try FileManager.default.attributesOfItem(atPath: sessions.path)[.posixPermissions] as? Int) == 0o600)
        #expect(!(try String(contentsOf: sessions, encoding: .utf8)).contains(String(cookie.split(separator: "=")[1])))

        gateway.process.send(SIGTERM)
        #expect(gateway.process.waitForExit() == 0)
        let restarted = try Gateway(config: try String(contentsOf: gateway.process.configPath, encoding: .utf8),
                                    directory: gateway.directory)
        let newAdminPort = try restarted.process.waitForPort(listener: "admin")
        let page = try Curl.get("http://127.0.0.1:\(newAdminPort)/", headers: ["Cookie: " + cookie])
        #expect(page.status == 200, "the session did not survive the restart: \(page.status)")
        #expect(page.body.contains("Log out"))
    }

    @Test func deadLettersAreListedReplayedAndResolved() throws {
        let sink = try WebhookSink(secret: testSigningSecret)
        let (gateway, adminPort, token) = try self.gateway("""
            \(webhookDestination("flaky", sink.url("/flaky/3"), options: "max-attempts 2"))
            route * * * -> flaky
            """)
        let admin = "http://127.0.0.1:\(adminPort)"
        let auth = ["Authorization: Bearer \(token)"]
        #expect(try Curl.get(admin + "/api/status").status == 401)
        #expect(try Curl.get(admin + "/api/status", headers: ["Authorization: Bearer wrong"]).status == 401)

        let uuid = UUID().uuidString.lowercased()
        #expect(try gateway.post(json: try signer.body(uuid: uuid)).status == 200)
        #expect(gateway.waitForDeadLetters { $0.count == 1 })
        let list = try Curl.get(admin + "/api/dead-letters?destination=flaky&reason=exhausted", headers: auth)
        #expect(list.status == 200)
        let letter = try #require(list.json?["items"]?.arrayValue?.first)
        #expect(letter["eventId"]?.stringValue == uuid)
        #expect(letter["attempts"]?.arrayValue?.count == 2)
        #expect(list.json?["nextCursor"] == .null)
        let id = try #require(letter["id"]?.stringValue)
        #expect(try Curl.get(admin + "/api/dead-letters/\(id)", headers: auth).json?["id"]?.stringValue == id)
        let event = try Curl.get(admin + "/api/events/\(uuid)", headers: auth)
        #expect(event.status == 200)
        #expect(event.json?["deliveries"]?.arrayValue?.first?["state"]?.stringValue == "dead-lettered")
        let status = try Curl.get(admin + "/api/status", headers: auth)
        #expect(status.json?["destinations"]?.arrayValue?.first?["name"]?.stringValue == "flaky")

        // Replay: a fresh budget; the third attempt succeeds and the letter leaves the store.
        let replay = try Curl.post(admin + "/api/dead-letters/\(id)/replay", json: "", headers: auth)
        #expect(replay.status == 200, "\(replay.body)")
        #expect(sink.waitFor { $0.count == 3 })
        #expect(sink.requests.last?["headers"]?["storerelay-attempt"]?.stringValue == "3")
        #expect(gateway.waitForDeadLetters { $0.isEmpty })
        #expect(try Curl.get(admin + "/api/dead-letters/\(id)", headers: auth).status == 404)
        #expect(try Curl.get(admin + "/api/dead-letters/..%2F..%2Fadmin.token", headers: auth).status >= 400)
    }

    @Test func unroutedLettersReplayWithTheCurrentRoutesAndThePageEscapesEverything() throws {
        let sink = try WebhookSink(secret: testSigningSecret)
        let (gateway, adminPort, token) = try self.gateway("""
            \(webhookDestination("ok", sink.url("/ok")))
            route production * * -> ok
            """)
        let admin = "http://127.0.0.1:\(adminPort)"
        let auth = ["Authorization: Bearer \(token)"]
        let uuid = UUID().uuidString.lowercased()
        let hostile = "<script>alert(1)</script>"
        #expect(try gateway.post(json: try signer.body(uuid: uuid, productId: hostile)).status == 200)
        #expect(gateway.waitForDeadLetters { $0.first?["reason"]?.stringValue == "unrouted" })

        let page = try Curl.get(admin + "/", headers: auth)
        #expect(page.status == 200)
        #expect(page.body.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
        #expect(!page.body.contains(hostile))
        #expect(page.body.contains("DID_RENEW") && page.body.contains("unrouted"))

        // Still no route for sandbox: the replay says so and the letter stays.
        let id = try #require(gateway.deadLetters.first?["id"]?.stringValue)
        #expect(try Curl.post(admin + "/api/dead-letters/\(id)/replay", json: "", headers: auth).status >= 400)
        var config = try String(contentsOf: gateway.process.configPath, encoding: .utf8)
        config = config.replacingOccurrences(of: "route production * * -> ok", with: "route * * * -> ok")
        try config.write(to: gateway.process.configPath, atomically: true, encoding: .utf8)
        gateway.process.send(SIGHUP)
        #expect(gateway.process.waitForLog { $0["message"]?.stringValue == "configuration reloaded" } != nil)
        let bulk = try Curl.post(admin + "/api/dead-letters/replay", json: #"{"reason":"unrouted"}"#, headers: auth)
        #expect(bulk.json?["replayed"]?.int64Value == 1, "\(bulk.body)")
        #expect(sink.waitFor { $0.count == 1 })
        #expect(gateway.waitForDeadLetters { $0.isEmpty })
    }

    /// A gateway that accepted three notifications, delivered them to a sink and refused one
    /// malformed body, with its `/metrics` text once the three deliveries are counted.
    private func gatewayAfterThreeDeliveries() throws -> (gateway: Gateway, sink: WebhookSink, metrics: CurlResponse) {
        let sink = try WebhookSink(secret: testSigningSecret)
        let (gateway, adminPort, _) = try self.gateway("""
            \(webhookDestination("ok", sink.url("/ok")))
            route * * * -> ok
            """)
        for _ in 0..<3 { #expect(try gateway.post(json: try signer.body()).status == 200) }
        #expect(try gateway.post(json: "garbage").status == 400)
        #expect(sink.waitFor { $0.count == 3 })
        // The sink has the request before the gateway has read the answer and counted it.
        var metrics = try Curl.get("http://127.0.0.1:\(adminPort)/metrics")
        let deadline = Date().addingTimeInterval(10)
        while !metrics.body.contains(Self.delivered) && Date() < deadline {
            Thread.sleep(forTimeInterval: 0.05)
            metrics = try Curl.get("http://127.0.0.1:\(adminPort)/metrics")
        }
        return (gateway, sink, metrics)
    }

    static let delivered = #"storerelay_deliveries_total{destination="ok",outcome="delivered"} 3"#

    @Test func metricsAreExposedAndLogsKeepSecrets() throws {
        let (gateway, _, metrics) = try gatewayAfterThreeDeliveries()
        #expect(metrics.status == 200)
        for family in ["storerelay_notifications_received_total", "storerelay_acknowledgement_seconds_bucket",
                       "storerelay_deliveries_total", "storerelay_delivery_seconds_count", "storerelay_queue_depth", "storerelay_queue_parked",
                       "storerelay_breaker_state", "storerelay_dead_letters", "storerelay_journal_bytes",
                       "storerelay_journal_segments"] {
            #expect(metrics.body.contains(family), "\(family)")
        }
        #expect(metrics.body.contains(#"storerelay_notifications_received_total{app="com.acme.journal",environment="sandbox",version="2",outcome="accepted"} 3"#))
        #expect(metrics.body.contains(Self.delivered))
        #expect(metrics.body.contains("storerelay_build_info{version=\"\(StoreRelayVersion.current)\"} 1"))
        // Series the configuration implies are there before anything happened to them.
        #expect(metrics.body.contains(#"storerelay_deliveries_total{destination="ok",outcome="exhausted"} 0"#))
        #expect(metrics.body.contains(#"storerelay_dead_letters_created_total{destination="ok",reason="rejected"} 0"#))
        #expect(metrics.body.contains(#"storerelay_dead_letters{destination="ok"} 0"#))
        #expect(metrics.body.contains(#"storerelay_oldest_pending_seconds{destination="ok"} 0"#))

        // Logs: one JSON object per line, never a secret or a signed payload at info.
        let lines = gateway.process.logLines
        #expect(!lines.isEmpty)
        for line in lines {
            #expect((try? JSONValue.parse(line))?["time"] != nil, "\(line)")
            #expect(!line.contains("s3cret-do-not-log") && !line.contains(testSigningSecret) && !line.contains("eyJhbGci"))
        }
        let started = gateway.process.logRecords.first { $0["message"]?.stringValue == "started" }
        // Counts are JSON numbers, not strings.
        #expect(started?["routes"]?.int64Value == 1 && started?["destinations"]?.int64Value == 1)
        // What a support search needs: the subscription, and who posted it.
        let accepted = gateway.process.logRecords.first { $0["message"]?.stringValue == "notification accepted" }
        #expect(accepted?["original.transaction.id"]?.stringValue == "2000000000000001", "\(String(describing: accepted))")
        #expect(accepted?["client"]?.stringValue?.hasPrefix("127.0.0.1:") == true, "\(String(describing: accepted))")
        // As the gateway was given it: the in-process harness makes routes.conf's `./` absolute.
        #expect(started?["data"]?.stringValue == gateway.directory.path + "/data")
    }

    static let prometheusClientAvailable: Bool =
        (try? CommandRunner.run("python3", ["-c", "import prometheus_client"]).status) == 0

    /// An independent check of the running gateway's `/metrics`: the official Prometheus
    /// Python client parses it (MetricsTests' PythonParserTests checks the renderer alone).
    @Test(.enabled(if: prometheusClientAvailable,
                   "python3 with prometheus_client is not installed (pip install prometheus_client): parser check skipped"))
    func metricsParseWithThePrometheusParser() throws {
        let (_, _, metrics) = try gatewayAfterThreeDeliveries()
        #expect(metrics.status == 200)
        let script = """
            import sys
            from prometheus_client.parser import text_string_to_metric_families
            families = {f.name: f for f in text_string_to_metric_families(sys.stdin.read())}
            received = families["storerelay_notifications_received"]
            total = sum(s.value for s in received.samples if s.labels.get("outcome") == "accepted")
            print(received.type, int(total), families["storerelay_acknowledgement_seconds"].type)
            """
        let parsed = try CommandRunner.run("python3", ["-c", script], stdin: Array(metrics.body.utf8))
        #expect(parsed.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "counter 3 histogram", "\(parsed.stderr)")
    }

    @Test func dlqCommandTalksToTheRunningGateway() throws {
        let (gateway, adminPort, _) = try self.gateway("route production * * -> nowhere\ndestination nowhere file ./data/q")
        let uuid = UUID().uuidString.lowercased()
        #expect(try gateway.post(json: try signer.body(uuid: uuid)).status == 200)
        #expect(gateway.waitForDeadLetters { $0.count == 1 })
        let cli = ["--config", gateway.process.configPath.path, "--admin", "127.0.0.1:\(adminPort)"]
        let table = try CommandRunner.storerelay(["dlq", "list"] + cli, directory: gateway.directory)
        #expect(table.status == 0, "\(table.stderr)")
        #expect(table.stdout.contains("unrouted") && table.stdout.contains("DID_RENEW"))
        let json = try CommandRunner.storerelay(["dlq", "list", "--json"] + cli, directory: gateway.directory)
        #expect(try JSONValue.parse(json.stdout).arrayValue?.first?["eventId"]?.stringValue == uuid)
        let purge = try CommandRunner.storerelay(["dlq", "purge", "--all"] + cli, directory: gateway.directory)
        #expect(purge.status == 2)
        #expect(gateway.deadLetters.count == 1)
        let confirmed = try CommandRunner.storerelay(["dlq", "purge", "--all", "--yes"] + cli, directory: gateway.directory)
        #expect(confirmed.status == 0, "\(confirmed.stderr)")
        #expect(gateway.deadLetters.isEmpty)
        let wrong = try CommandRunner.storerelay(["dlq", "list", "--token", "nope"] + cli, directory: gateway.directory)
        #expect(wrong.status == 1)
        #expect(wrong.stderr.lowercased().contains("token"))
    }
}
