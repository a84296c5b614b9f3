import StoreRelayCore

/// What one reconciliation pass is asked to do: the scheduled one looks back from the last
/// checkpoint; `storerelay reconcile` names its own window.
struct ReconcileRequest: Sendable {
    /// How far back from now to look; nil: from the checkpoint minus the overlap.
    var since: Duration?
    /// Where the window starts (UNIX ms), whenever the pass runs: after a loss of the
    /// cluster server's data, one overlap before the last moment it was seen whole.
    var from: Int64?
    /// Only what Apple failed to deliver (`onlyFailures`).
    var onlyFailures = false
    /// Fetch and judge, store nothing and keep the checkpoint.
    var dryRun = false
}

/// What a pass found, as `/api/reconcile`, `/api/status` and `storerelay reconcile` show it.
struct ReconcileReport: Sendable {
    enum Outcome: String, Sendable {
        case success, failed
    }

    var startedAt: Timestamp
    var finishedAt: Timestamp?
    var outcome: Outcome = .success
    /// Why it failed, in one sentence.
    var error: String?
    /// The window asked of Apple (UNIX milliseconds).
    var windowStart: Int64 = 0
    var windowEnd: Int64 = 0
    /// Why the window starts later than asked, if it does.
    var clamped: String?
    var dryRun = false
    var pages = 0
    /// Notifications Apple's history listed.
    var found = 0
    /// Of those, already in the journal (received from Apple's push, or by an earlier pass).
    var alreadyHad = 0
    /// Stored now, and fanned out (or, with dry run, that would have been).
    var recovered = 0
    /// Stored now but quarantined (not for this gateway).
    var quarantined = 0
    /// Not proven Apple's or not a notification: refused, as a push of them would have been.
    var failed = 0
    /// Times Apple's pagination token expired and the window was fetched again.
    var restarts = 0

    var json: JSONValue {
        .object(JSONObject([
            ("startedAt", .string(startedAt.iso8601)),
            ("finishedAt", .string(finishedAt?.iso8601)),
            ("outcome", .string(outcome.rawValue)),
            ("error", .string(error)),
            ("windowStart", .string(Timestamp(milliseconds: windowStart).iso8601)),
            ("windowEnd", .string(Timestamp(milliseconds: windowEnd).iso8601)),
            ("clamped", .string(clamped)),
            ("dryRun", .bool(dryRun)),
            ("pages", .integer(Int64(pages))),
            ("found", .integer(Int64(found))),
            ("alreadyHad", .integer(Int64(alreadyHad))),
            ("recovered", .integer(Int64(recovered))),
            ("quarantined", .integer(Int64(quarantined))),
            ("failed", .integer(Int64(failed))),
            ("restarts", .integer(Int64(restarts))),
        ]))
    }
}

/// What one probe found: Apple asked for a TEST notification, and whether it arrived here.
struct ProbeReport: Sendable {
    enum Outcome: String, Sendable {
        /// The TEST notification was accepted by this gateway.
        case arrived
        /// Apple never got it here within the time allowed.
        case timeout
        /// Apple's API refused or could not be reached.
        case failed
    }

    var startedAt: Timestamp
    var outcome: Outcome = .failed
    var error: String?
    /// The TEST notification's id, once Apple shows it.
    var notificationUUID: String?
    /// From the request to Apple until the notification was stored here.
    var roundTripMilliseconds: Int64?
    /// Apple's own account of its attempts (`sendAttempts`).
    var attempts: [(date: Int64?, result: String)] = []

    var json: JSONValue {
        .object(JSONObject([
            ("startedAt", .string(startedAt.iso8601)),
            ("outcome", .string(outcome.rawValue)),
            ("error", .string(error)),
            ("notificationUUID", .string(notificationUUID)),
            ("roundTripMs", roundTripMilliseconds.map { .integer($0) } ?? .null),
            ("sendAttempts", .array(attempts.map { attempt in
                .object(JSONObject([
                    ("attemptDate", .string(attempt.date.map { Timestamp(milliseconds: $0).iso8601 })),
                    ("sendAttemptResult", .string(attempt.result)),
                ]))
            })),
        ]))
    }
}
