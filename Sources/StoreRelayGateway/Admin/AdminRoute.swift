/// The admin listener's routes, matched from a method and a raw (not percent-decoded) path.
///
/// `HTTPRouter` matches exact paths only; these routes carry identifiers, so matching is done
/// here on path segments. Identifier segments are returned raw: the caller validates them
/// (`DeadLetterStore.isValidID`, `AdminRoute.isValidEventID`) before they reach anything
/// else, and a segment such as `..%2F..%2Fetc` fails that validation whatever it decodes to.
enum AdminRoute: Equatable {
    case metrics
    case status
    case event(id: String)
    case listEvents
    case listDeadLetters
    case replayMatching
    case deadLetter(id: String)
    case deleteDeadLetter(id: String)
    case replayDeadLetter(id: String)
    case redeliverEvent(id: String)
    case page
    case eventPage(id: String)
    /// The events view: the event log searched and filtered.
    case eventLog
    case loginForm
    case login
    case logout
    case uiReplay
    case uiPurge
    case uiReplayAll
    /// `POST /api/reconcile`: one pass with Apple's Notification History, answered when done.
    case reconcile
    /// `POST /api/probe`: a TEST notification's round trip, answered when done.
    case probe
    /// `GET /api/destinations`: every destination's state, paused or not.
    case listDestinations
    /// `POST /api/destinations/{name}/pause` and `/resume` (SPEC "Delivery controls").
    case pauseDestination(name: String)
    case resumeDestination(name: String)
    /// The page's Pause and Resume buttons (a form with the destination's name).
    case uiPause
    case uiResume
    /// The page's reconciliation buttons: a pass (or a dry run) or a probe, started and left
    /// to finish; the table shows the outcome.
    case uiReconcile
    case uiProbe
    case uiRedeliver

    enum Match: Equatable {
        case route(AdminRoute)
        case notFound
        case methodNotAllowed(allow: [String])
    }

    /// Matches `method` on `path`; `HEAD` counts as `GET`.
    static func match(method: String, path: String) -> Match {
        let method = method == "HEAD" ? "GET" : method
        let table = candidates(path: path)
        guard !table.isEmpty else { return .notFound }
        if let route = table.first(where: { $0.method == method }) { return .route(route.route) }
        var allow = Set(table.map(\.method))
        if allow.contains("GET") { allow.insert("HEAD") }
        return .methodNotAllowed(allow: allow.sorted())
    }

    /// The routes served on `path`, by method.
    private static func candidates(path: String) -> [(method: String, route: AdminRoute)] {
        switch path {
        case "/": return [("GET", .page)]
        case "/events": return [("GET", .eventLog)]
        case "/metrics": return [("GET", .metrics)]
        case "/login": return [("GET", .loginForm), ("POST", .login)]
        case "/logout": return [("POST", .logout)]
        case "/ui/replay": return [("POST", .uiReplay)]
        case "/ui/purge": return [("POST", .uiPurge)]
        case "/ui/replay-all": return [("POST", .uiReplayAll)]
        case "/ui/pause": return [("POST", .uiPause)]
        case "/ui/resume": return [("POST", .uiResume)]
        case "/ui/reconcile": return [("POST", .uiReconcile)]
        case "/ui/probe": return [("POST", .uiProbe)]
        case "/ui/redeliver": return [("POST", .uiRedeliver)]
        case "/api/destinations": return [("GET", .listDestinations)]
        case "/api/status": return [("GET", .status)]
        case "/api/events": return [("GET", .listEvents)]
        case "/api/dead-letters": return [("GET", .listDeadLetters)]
        case "/api/dead-letters/replay": return [("POST", .replayMatching)]
        case "/api/reconcile": return [("POST", .reconcile)]
        case "/api/probe": return [("POST", .probe)]
        default: break
        }
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        if segments.count == 3, segments[0].isEmpty, segments[1] == "events", !segments[2].isEmpty {
            return [("GET", .eventPage(id: segments[2]))]
        }
        guard segments.count >= 4, segments[0].isEmpty, segments[1] == "api", !segments[3].isEmpty else { return [] }
        let id = segments[3]
        switch (segments[2], segments.count) {
        case ("events", 4):
            return [("GET", .event(id: id))]
        case ("events", 5) where segments[4] == "redeliver":
            return [("POST", .redeliverEvent(id: id))]
        case ("dead-letters", 4):
            return [("GET", .deadLetter(id: id)), ("DELETE", .deleteDeadLetter(id: id))]
        case ("dead-letters", 5) where segments[4] == "replay":
            return [("POST", .replayDeadLetter(id: id))]
        case ("destinations", 5) where segments[4] == "pause":
            return [("POST", .pauseDestination(name: id))]
        case ("destinations", 5) where segments[4] == "resume":
            return [("POST", .resumeDestination(name: id))]
        default:
            return []
        }
    }

    /// Event ids are notification UUIDs (or, for V1, a hex hash): `[A-Za-z0-9-]{1,64}`.
    static func isValidEventID(_ id: String) -> Bool {
        let bytes = Array(id.utf8)
        return (1...64).contains(bytes.count) && bytes.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-")
        }
    }

    /// Whether answering waits on Apple (seconds to minutes): such routes answer later,
    /// without holding the admin queue.
    var isLongRunning: Bool { self == .reconcile || self == .probe }

    /// Whether the route is the HTML page's (session cookie accepted) rather than the API's.
    var isPage: Bool {
        switch self {
        case .page, .eventPage, .eventLog, .loginForm, .login, .logout, .uiReplay, .uiPurge, .uiReplayAll, .uiPause, .uiResume, .uiReconcile,
             .uiProbe, .uiRedeliver: true
        default: false
        }
    }
}
