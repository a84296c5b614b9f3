import StoreRelayCore

/// How a journal writes, rotates and remembers. Every field has a production default.
public struct JournalOptions: Sendable {
    /// A segment is closed and a new one started when the next batch would take it past
    /// this size. One batch is never split, so a segment may exceed it by one batch.
    public var segmentSizeLimit: Int = 64 * 1024 * 1024

    /// Largest payload (caller bytes) accepted by `append`; also the bound recovery uses to
    /// tell a plausible length prefix from garbage.
    public var maxPayloadBytes: Int = 16 * 1024 * 1024

    /// How long an event id is remembered for duplicate detection once its segment has been
    /// retired. Apple retries a notification for days, not months.
    public var dedupeRetention: Duration = .seconds(30 * 24 * 3600)

    /// Source of the first-seen time stored with each record and of "now" for retention.
    public var clock: any TimeSource = WallClock()

    public init() {}

    var dedupeRetentionMilliseconds: Int64 {
        let parts = dedupeRetention.components
        return parts.seconds * 1000 + parts.attoseconds / 1_000_000_000_000_000
    }
}
