import StoreRelayCore

/// One app and environment's intake over the last 24 hours, as the page's intake panel
/// shows it (SPEC "Event log, search and operational events", The page).
public struct IntakeFigures: Sendable, Equatable {
    /// The bundle id; `unknown` for a body that never became an event (a bad signature).
    public var app: String
    public var environment: String
    /// New notifications stored and fanned out (duplicates not counted again).
    public var received: Int
    /// Stored but kept from delivery (an app or environment not accepted, stale, unreadable).
    public var quarantined: Int
    /// Refused: malformed, a signature that does not verify, or not stored (503).
    public var rejected: Int
    /// The last notification of this app and environment that arrived whole (accepted,
    /// quarantined or a duplicate): whether Apple is still sending.
    public var lastReceived: Timestamp?

    public init(app: String, environment: String, received: Int = 0, quarantined: Int = 0, rejected: Int = 0,
                lastReceived: Timestamp? = nil) {
        self.app = app
        self.environment = environment
        self.received = received
        self.quarantined = quarantined
        self.rejected = rejected
        self.lastReceived = lastReceived
    }
}

/// Counts each answered notification per app and environment in hourly buckets, keeping
/// the last 24, so the page can say what arrived over a day without a metrics server.
///
/// In memory and per instance: it starts empty at each start (the page says so), and costs
/// at most 24 buckets per app and environment seen. Counting takes one lock.
final class IntakeTally: Sendable {
    private struct Key: Hashable {
        var app: String
        var environment: String
    }
    private struct Counts {
        var received = 0
        var quarantined = 0
        var rejected = 0
    }
    private struct Series {
        /// By hour since the epoch; only the last 24 are kept.
        var hours: [Int64: Counts] = [:]
        var lastReceived: Timestamp?
    }

    static let window = 24
    /// Apps and environments tracked at most; more (bundle ids are only as trustworthy as
    /// the environments accepted unverified) are counted together as app `other`.
    static let maxSeries = 1000
    private let series = Locked<[Key: Series]>([:])

    init() {}

    /// Counts one answer: `outcome` is `IntakeOutcome.label` (`accepted`, `duplicate`,
    /// `quarantined`, `malformed`, `signature`, `unavailable`).
    func count(app: String?, environment: String?, outcome: String, at now: Timestamp) {
        var key = Key(app: app ?? "unknown", environment: environment ?? "unknown")
        let hour = Self.hour(of: now)
        series.withLock { all in
            if all[key] == nil, all.count >= Self.maxSeries - 1 { key = Key(app: "other", environment: "other") }
            var entry = all[key] ?? Series()
            entry.hours = entry.hours.filter { $0.key > hour - Int64(Self.window) }
            var counts = entry.hours[hour] ?? Counts()
            switch outcome {
            case "accepted": counts.received += 1
            case "quarantined": counts.quarantined += 1
            case "duplicate": break
            default: counts.rejected += 1
            }
            entry.hours[hour] = counts
            if ["accepted", "quarantined", "duplicate"].contains(outcome) { entry.lastReceived = now }
            all[key] = entry
        }
    }

    /// Each app and environment seen in the last 24 hours (or ever, for its last received
    /// time), sorted by app then environment.
    func figures(at now: Timestamp) -> [IntakeFigures] {
        let hour = Self.hour(of: now)
        return series.withLock { all in
            all.map { key, entry in
                var figures = IntakeFigures(app: key.app, environment: key.environment, lastReceived: entry.lastReceived)
                for (bucket, counts) in entry.hours where bucket > hour - Int64(Self.window) {
                    figures.received += counts.received
                    figures.quarantined += counts.quarantined
                    figures.rejected += counts.rejected
                }
                return figures
            }
        }.sorted { ($0.app, $0.environment) < ($1.app, $1.environment) }
    }

    private static func hour(of time: Timestamp) -> Int64 { time.seconds / 3600 }
}
