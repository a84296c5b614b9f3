import Foundation
import Testing
@testable import StoreRelayGateway
import StoreRelayCore
import StoreRelayTestSupport

/// The page's search over events, its intake and cluster panels and its reconciliation
/// buttons (issue 28, point 2; SPEC "Event log, search and operational events", The page).
@Suite struct PagePanelTests {
    @Test func theSearchFindsADeliveredEventNotOnlyDeadLetters() throws {
        let admin = try AdminHarness()
        let id = "0b6a1c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d"
        try admin.backend.recordEvent(id: id, deliveries: [("billing", .delivered), ("ledger", .pending)])
        let page = try admin.curl("/?q=\(id)", headers: [admin.bearer]).body
        #expect(page.contains("Events matching <code>\(id)</code>"))
        #expect(page.contains("href=\"/events/\(id)\""))
        #expect(page.contains("billing: delivered") && page.contains("ledger: pending"))
        // No dead letter has it, and the page says that too, below.
        #expect(page.contains("No dead letters match."))
    }

    @Test func anOriginalTransactionIdShowsTheSubscriptionsTimelineOldestFirst() throws {
        let admin = try AdminHarness()
        let now = Timestamp.now().milliseconds
        try admin.backend.recordEvent(id: "e-renewed", type: "DID_RENEW", originalTransactionId: "2000000555",
                                      receivedAt: Timestamp(milliseconds: now - 60_000), deliveries: [("billing", .delivered)])
        try admin.backend.recordEvent(id: "a-subscribed", type: "SUBSCRIBED", originalTransactionId: "2000000555",
                                      receivedAt: Timestamp(milliseconds: now - 86_400_000), deliveries: [("billing", .delivered)])
        try admin.backend.recordEvent(id: "other", originalTransactionId: "2000000999", deliveries: [("billing", .delivered)])
        let page = try admin.curl("/?q=2000000555", headers: [admin.bearer]).body
        #expect(page.contains("Subscription <code>2000000555</code>"))
        let subscribed = try #require(page.range(of: "<b>SUBSCRIBED</b>"))
        let renewed = try #require(page.range(of: "<b>DID_RENEW</b>"))
        #expect(subscribed.lowerBound < renewed.lowerBound, "oldest first")
        #expect(!page.contains("/events/other"))
        // An event's view leads to its subscription's timeline.
        let view = try admin.curl("/events/e-renewed", headers: [admin.bearer]).body
        #expect(view.contains("<a href=\"/?q=2000000555\">subscription 2000000555's timeline</a>"))
    }

    @Test func theIntakePanelSaysWhatArrivedPerAppAndEnvironment() throws {
        let admin = try AdminHarness()
        var page = try admin.curl("/", headers: [admin.bearer]).body
        #expect(page.contains("Nothing received yet."), "an empty intake says so rather than nothing")
        admin.backend.update {
            $0.intake = [
                IntakeFigures(app: "com.acme.journal", environment: "production", received: 41, quarantined: 0, rejected: 2,
                              lastReceived: Timestamp(milliseconds: Timestamp.now().milliseconds - 5 * 60_000)),
                IntakeFigures(app: "com.acme.other", environment: "sandbox", received: 0, quarantined: 3, rejected: 0),
            ]
        }
        page = try admin.curl("/", headers: [admin.bearer]).body
        for expected in ["<h2>Intake", "com.acme.journal", "production", ">41<", "<span class=\"bad\">2</span>", "5m",
                         "com.acme.other", "<span class=\"bad\">3</span>", "never"] {
            #expect(page.contains(expected), "intake shows \(expected)")
        }
        #expect(!page.contains("<h2>Cluster"), "single-node mode has no cluster panel")
    }

    @Test func theClusterPanelShowsInstancesAndLabelsPerInstanceFigures() throws {
        let admin = try AdminHarness()
        admin.backend.update {
            $0.statuses = [FakeBackend.status("billing", depth: 3)]
            $0.cluster = [
                "server": "redis://10.0.0.5:6379", "connected": true, "answering": true, "node": "10.0.0.5:6379",
                "instanceId": "relay-a", "durabilityProblem": nil, "integrity": "sealed", "waitReplicas": 1,
                "durability": ["appendonly": "yes", "appendfsync": "always", "maxmemory-policy": "noeviction"],
                "instances": [["id": "relay-a", "lastSeen": .string(Timestamp.now().iso8601)],
                              ["id": "relay-b", "lastSeen": .string(Timestamp.now().iso8601)]],
            ]
        }
        let page = try admin.curl("/", headers: [admin.bearer]).body
        for expected in ["<h2>Cluster", "redis://10.0.0.5:6379", ">connected<", "appendfsync always", "wait-replicas 1",
                         "Instances (2)", "<code>relay-a</code> <span class=\"tag ok\">this instance</span>", "<code>relay-b</code>",
                         "In flight <span class=\"tag\">this instance</span>", "Queue depth <span class=\"tag\">shared</span>",
                         "(this instance, since its start"] {
            #expect(page.contains(expected), "cluster panel shows \(expected)")
        }
    }

    @Test func theReconciliationButtonsStartAPassADryRunOrAProbe() throws {
        let admin = try AdminHarness()
        admin.backend.update {
            $0.reconciliations = [[
                "app": "com.acme.journal", "environment": "sandbox", "lastSuccess": nil,
                "lastRun": ["outcome": "success", "dryRun": true, "startedAt": .string(Timestamp.now().iso8601), "found": 4, "recovered": 1],
                "lastProbe": nil,
            ]]
        }
        let page = try admin.curl("/", headers: [admin.bearer]).body
        #expect(page.contains("<span class=\"tag warn\">dry run</span>"), "a dry run is marked as one")
        for action in ["/ui/reconcile", "/ui/probe"] { #expect(page.contains("action=\"\(action)\"")) }

        let jar = try CookieJar()
        _ = try jar.logIn(admin)
        let csrf = try #require(csrfToken(in: try admin.curl("/", extra: jar.arguments).body))
        let base = "csrf=\(csrf)&app=com.acme.journal&environment=sandbox"
        for (path, body, marker) in [("/ui/reconcile", base, "reconciling"), ("/ui/reconcile", base + "&dryRun=1", "dryrunning"),
                                     ("/ui/probe", base, "probing"),
                                     ("/ui/reconcile", "csrf=\(csrf)&app=com.acme.unknown&environment=sandbox", "noreconcile")] {
            let answer = try admin.curl(path, method: "POST", body: body, extra: jar.arguments)
            #expect(answer.status == 303)
            #expect(answer.headers["location"]?.contains("done=\(marker)") == true, "\(path) \(body)")
        }
        let checks = admin.backend.appleChecks
        #expect(checks.map(\.dryRun) == [false, true, false])
        #expect(checks.map(\.probe) == [false, false, true])
        #expect(checks.allSatisfy { $0.app == "com.acme.journal" && $0.environment == "sandbox" })
        // Without the session's CSRF token nothing starts.
        #expect(try admin.curl("/ui/reconcile", method: "POST", body: "app=com.acme.journal&environment=sandbox",
                               extra: jar.arguments).status == 403)
        #expect(admin.backend.appleChecks.count == 3)
    }

    @Test func theDeadLetterRowIsCompactWithItsActionsBesideTheId() throws {
        let admin = try AdminHarness()
        let letter = try admin.backend.add(destination: "billing")
        let page = try admin.curl("/", headers: [admin.bearer]).body
        let row = try #require(page.range(of: "<code class=\"copy\" title=\"\(letter.eventId)"))
        let rest = page[row.lowerBound...]
        // In the same cell: the id (selected whole in one click), its view, Replay and Purge.
        let cell = try #require(rest.range(of: "</td>")).lowerBound
        let first = rest[..<cell]
        #expect(first.contains("href=\"/events/\(letter.eventId)\"") && first.contains("action=\"/ui/replay\"")
            && first.contains("action=\"/ui/purge\""))
        #expect(page.contains("<table class=\"fixed\">"))
    }
}

/// The intake panel's figures: counts per app and environment over the last 24 hours.
@Suite struct IntakeTallyTests {
    @Test func countsPerAppAndEnvironmentForADay() {
        let tally = IntakeTally()
        let start = Timestamp(seconds: 1_800_000_000)
        for outcome in ["accepted", "accepted", "duplicate", "quarantined", "signature", "unavailable"] {
            tally.count(app: "com.acme.journal", environment: "production", outcome: outcome, at: start)
        }
        tally.count(app: nil, environment: nil, outcome: "malformed", at: start)
        var figures = tally.figures(at: start)
        #expect(figures == [
            IntakeFigures(app: "com.acme.journal", environment: "production", received: 2, quarantined: 1, rejected: 2, lastReceived: start),
            IntakeFigures(app: "unknown", environment: "unknown", received: 0, quarantined: 0, rejected: 1, lastReceived: nil),
        ])
        // A day later the counts have aged out; when the last one came is still known.
        let later = Timestamp(seconds: start.seconds + 24 * 3600)
        figures = tally.figures(at: later)
        #expect(figures.first == IntakeFigures(app: "com.acme.journal", environment: "production", lastReceived: start))
        tally.count(app: "com.acme.journal", environment: "production", outcome: "accepted", at: later)
        #expect(tally.figures(at: later).first?.received == 1)
    }
}

extension IntakeTallyTests {
    @Test func aFloodOfAppsIsCountedTogetherBeyondTheCap() {
        let tally = IntakeTally()
        let now = Timestamp(seconds: 1_800_000_000)
        for index in 0..<(IntakeTally.maxSeries + 50) {
            tally.count(app: "com.flood.\(index)", environment: "xcode", outcome: "quarantined", at: now)
        }
        let figures = tally.figures(at: now)
        #expect(figures.count == IntakeTally.maxSeries)
        #expect(figures.first { $0.app == "other" }?.quarantined == 51)
    }
}
