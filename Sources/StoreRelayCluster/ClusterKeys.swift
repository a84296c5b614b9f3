/// The keys cluster mode keeps on the Redis or Valkey server (docs/SPEC.md "Cluster mode").
///
/// Every name starts with `storerelay:` and carries the hash tag `{storerelay}`: Redis
/// Cluster and Valkey cluster place all keys with one tag in one slot, so the acknowledgement
/// script may touch the dedupe marker, the record and every stream at once.
public struct ClusterKeys: Sendable, Hashable {
    public static let prefix = "storerelay:{storerelay}:"

    public init() {}

    /// `seen:<id>`: present (with the dedupe window as TTL) once the id was acknowledged.
    public func seen(_ id: String) -> String { Self.prefix + "seen:" + id }
    /// `event:<id>`: the stored notification record (as the journal stores it).
    public func event(_ id: String) -> String { Self.prefix + "event:" + id }
    /// `queue:<destination>`: the destination's stream of event ids to deliver.
    public func queue(_ destination: String) -> String { Self.prefix + "queue:" + destination }
    /// `dead`: the stream of events dead-lettered at acceptance (unrouted, quarantined).
    public var deadLetters: String { Self.prefix + "dead" }
    /// `delayed:<destination>`: event ids waiting for a retry, scored by their due time.
    public func delayed(_ destination: String) -> String { Self.prefix + "delayed:" + destination }
    /// `attempts:<destination>`: how many attempts each event retried there has had.
    public func attempts(_ destination: String) -> String { Self.prefix + "attempts:" + destination }
    /// The consumer group every instance joins on every destination's stream.
    public static let group = "storerelay"
}
