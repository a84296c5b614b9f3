import Foundation
import StoreRelayTestSupport
import Testing
@testable import StoreRelayGateway
import StoreRelayCore

@Suite struct RoutingAndEncodingTests {
    @Test func routesMatchOnSegments() {
        let id = "dl-" + String(repeating: "a", count: 32)
        #expect(AdminRoute.match(method: "GET", path: "/api/dead-letters/\(id)") == .route(.deadLetter(id: id)))
        #expect(AdminRoute.match(method: "HEAD", path: "/api/dead-letters/\(id)") == .route(.deadLetter(id: id)))
        #expect(AdminRoute.match(method: "DELETE", path: "/api/dead-letters/\(id)") == .route(.deleteDeadLetter(id: id)))
        #expect(AdminRoute.match(method: "POST", path: "/api/dead-letters/\(id)/replay") == .route(.replayDeadLetter(id: id)))
        #expect(AdminRoute.match(method: "POST", path: "/api/dead-letters/replay") == .route(.replayMatching))
        #expect(AdminRoute.match(method: "GET", path: "/api/dead-letters/replay") == .methodNotAllowed(allow: ["POST"]))
        #expect(AdminRoute.match(method: "GET", path: "/api/events/x") == .route(.event(id: "x")))
        for path in ["/api/dead-letters/", "/api/dead-letters/a/b", "/api/dead-letters/a/replay/x", "/api//x", "/api/events/",
                     "/API/status", "api/status", "/api/dead-letters/../../etc/passwd", "/x/api/status"] {
            #expect(AdminRoute.match(method: "GET", path: path) == .notFound, "\(path)")
        }
    }

    @Test func eventIDs() {
        #expect(AdminRoute.isValidEventID("6a3d8f9c-1b2e-4c5d-8e7f-0123456789ab"))
        #expect(AdminRoute.isValidEventID(String(repeating: "F", count: 64)))
        for bad in ["", String(repeating: "a", count: 65), "../x", "a%2Fb", "a b", "é"] {
            #expect(!AdminRoute.isValidEventID(bad), "\(bad)")
        }
    }

    @Test func formEncodingRoundTripsAndToleratesJunk() {
        let pairs = [("a b", "x&y=z"), ("é", "100%"), ("empty", "")]
        let decoded = FormEncoding.decode(FormEncoding.encode(pairs))
        #expect(decoded.map(\.name) == pairs.map(\.0) && decoded.map(\.value) == pairs.map(\.1))
        #expect(FormEncoding.decode("a=1+2&&b&c=%zz%4").map { "\($0.name)=\($0.value)" } == ["a=1 2", "b=", "c=%zz%4"])
        #expect(FormEncoding.value("token", in: "x=1&token=a%2Bb") == "a+b")
        #expect(FormEncoding.percentDecode("%ff%fe") == "\u{FFFD}\u{FFFD}")
    }

    @Test func escapingCoversTextAndAttributes() {
        #expect(HTMLEscaping.escape(#"<a href="x">'&'</a>"#) == "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;")
        #expect(HTMLEscaping.escape("plain é") == "plain é")
    }

    @Test func prettyJSONKeepsOrderAndEscapes() throws {
        let value = try JSONValue.parse(#"{"b":[1,{"x":"a\"b"}],"a":{},"c":[],"d":1.50}"#)
        #expect(PrettyJSON.render(value) == """
            {
              "b": [
                1,
                {
                  "x": "a\\"b"
                }
              ],
              "a": {},
              "c": [],
              "d": 1.50
            }
            """)
        #expect(try JSONValue.parse(PrettyJSON.render(value)) == value)
    }

    @Test func agesAndNotices() {
        #expect(AgeFormatting.describe(milliseconds: -5) == "0s")
        #expect(AgeFormatting.describe(milliseconds: 59_999) == "59s")
        #expect(AgeFormatting.describe(milliseconds: 3_599_000) == "59m")
        #expect(AgeFormatting.describe(milliseconds: 3_600_000 * 5 + 180_000) == "5h 03m")
        #expect(AgeFormatting.describe(milliseconds: 86_400_000 * 12 + 3_600_000 * 4) == "12d 4h")
        #expect(AdminHandler.notice("replayed-3") == "Replayed 3 dead letters.")
        #expect(AdminHandler.notice("purged-1") == "Purged 1 dead letter.")
        #expect(AdminHandler.notice("replayed-x") == nil && AdminHandler.notice("<b>") == nil)
    }

    @Test func sessionsExpireAndAreBounded() {
        let clock = ManualClock()
        let sessions = AdminSessions(clock: clock, lifetime: .seconds(60), secret: "admin-token", maxSessions: 3)
        let first = sessions.create()
        #expect(sessions.session(id: first.id) == first)
        #expect(first.id != first.csrfToken && first.id.count == 64)
        clock.advance(by: .milliseconds(60_001))
        #expect(sessions.session(id: first.id) == nil, "expired")
        let made = (0..<4).map { _ in
            clock.advance(by: .milliseconds(1))
            return sessions.create()
        }
        #expect(sessions.session(id: made[0].id) == nil, "the oldest went when the cap was reached")
        #expect(made.dropFirst().allSatisfy { sessions.session(id: $0.id) != nil })
        sessions.remove(id: made[3].id)
        #expect(sessions.session(id: made[3].id) == nil)
    }

    /// With a file, sessions survive a restart (a new `AdminSessions` on the same file), minus
    /// the expired and the logged out ones; the file is 0600 and holds no session id.
    @Test func sessionsSurviveARestartThroughTheirFile() throws {
        let directory = try TestPaths.makeTemporaryDirectory("storerelay-sessions").path
        let file = directory + "/admin.sessions"
        let clock = ManualClock()
        let before = AdminSessions(clock: clock, lifetime: .seconds(60), secret: "admin-token", file: file)
        let kept = before.create()
        clock.advance(by: .seconds(30))
        let later = before.create()
        let gone = before.create()
        before.remove(id: gone.id)
        let text = try String(contentsOfFile: file, encoding: .utf8)
        #expect(!text.contains(kept.id) && !text.contains(later.id), "the file must not hold session ids")
        let mode = try #require(FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int)
        #expect(mode == 0o600)

        let after = AdminSessions(clock: clock, lifetime: .seconds(60), secret: "admin-token", file: file)
        #expect(after.session(id: kept.id) == kept)
        #expect(after.session(id: later.id) == later)
        #expect(after.session(id: gone.id) == nil)
        clock.advance(by: .seconds(31))
        #expect(AdminSessions(clock: clock, lifetime: .seconds(60), secret: "admin-token", file: file).session(id: kept.id) == nil, "expired meanwhile")

        // A new admin token (rotated after a leak) ends every session.
        let rotated = AdminSessions(clock: clock, lifetime: .seconds(60), secret: "rotated-token", file: file)
        #expect(rotated.session(id: later.id) == nil)

        // A damaged file costs the sessions, not the start.
        try "not json".write(toFile: file, atomically: true, encoding: .utf8)
        #expect(AdminSessions(clock: clock, lifetime: .seconds(60), secret: "admin-token", file: file).session(id: later.id) == nil)
    }
}
