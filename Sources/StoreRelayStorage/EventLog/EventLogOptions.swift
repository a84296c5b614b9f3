import StoreRelayCore

/// How the event log is laid out and how long it keeps events.
public struct EventLogOptions: Sendable {
    /// Events older than this are gone: whole segments are deleted once their newest event
    /// is older (`event-log 30d`).
    public var retention: Duration = .seconds(30 * 86_400)
    /// Each segment holds the events of one span of `receivedAt` (and at most
    /// `maxRecordsPerSegment`): a lookup probes one index per segment, so their number is
    /// about retention / span however many events arrive, and retention deletes whole files.
    public var segmentSpan: Duration = .seconds(3_600)
    /// The open segment's index lives in memory until it is sealed: this bounds it (at most
    /// about 13 MiB at 100,000: three keys an event in a table at most half full) whatever the rate.
    public var maxRecordsPerSegment = 100_000
    /// Records a list without `q` reads before it answers with what it found and a cursor
    /// to go on from: a filter that matches little never holds the log for long.
    public var scanBudget = 200_000
    public var clock: any TimeSource = WallClock()

    public init() {}
}
