import StoreRelayCore

/// How a file queue rotates and compresses its segments: the `rotate` and `compress`
/// options of a `destination NAME file DIR { ... }` block. Every field has the SPEC default.
public struct FileQueueOptions: Sendable {
    /// What happens to a segment after it is closed.
    public enum Compression: Sendable, Hashable {
        /// Closed segments stay `<seq>.jsonl`.
        case none
        /// Closed segments become `<seq>.jsonl.gz` (gzip, readable by `gzip -d`), written
        /// through `<seq>.jsonl.gz.tmp` so a consumer only ever sees complete files.
        case gzip
    }

    /// A segment is closed before a write that would take it past this many bytes. A batch
    /// is split across segments at line boundaries; only a single line longer than this
    /// makes a segment larger (it then has that line alone).
    public var rotateSize: Int = 64 * 1024 * 1024

    /// A segment holding at least one line is closed once it has been open this long, so
    /// consumers see quiet traffic within a bounded delay. An empty segment is never
    /// closed for age (segments are created on their first line). Zero disables it.
    public var rotateAge: Duration = .seconds(3600)

    public var compression: Compression = .none

    /// zlib level for `.gzip`: 1 (fast) to 9 (small). Compression runs on its own queue,
    /// never on the append path.
    public var compressionLevel: Int32 = 6

    /// How often the age of the open segment is checked (real time). Age itself is
    /// measured with `clock`.
    public var ageCheckInterval: Duration = .seconds(1)

    /// Source of "now" for segment age; tests inject one they move by hand.
    public var clock: any TimeSource = WallClock()

    public init() {}

    public init(rotateSize: Int, rotateAge: Duration, compression: Compression = .none) {
        self.rotateSize = rotateSize
        self.rotateAge = rotateAge
        self.compression = compression
    }

    var rotateAgeMilliseconds: Int64 { rotateAge.wholeMilliseconds }
}
