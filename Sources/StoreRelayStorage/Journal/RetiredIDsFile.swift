/// What the journal's retire queue knows of `seen-ids` between retirements.
struct RetiredIDsFile: Sendable {
    /// Expired entries are dropped at most this often: dropping them rewrites the whole file.
    static let compactionIntervalMilliseconds: Int64 = 3_600_000

    /// Bytes of intact chunks: the next retirement's chunk is written here.
    var length = DedupeSnapshot.headerSize
    /// The oldest first-seen time in the file; nil when it holds no entry.
    var oldestFirstSeen: Int64?
    /// When the file was last rewritten without its expired entries.
    var compactedAt: Int64 = 0
    /// False after a rewrite failed part-way: the file on disk may be the old one or the new
    /// one, and `length` must be read back before the next chunk is written.
    var lengthIsKnown = true

    /// Whether the file holds an entry older than `cutoff` and was not compacted lately.
    func needsCompaction(cutoff: Int64, now: Int64) -> Bool {
        guard let oldestFirstSeen, oldestFirstSeen < cutoff else { return false }
        return now - compactedAt >= Self.compactionIntervalMilliseconds
    }

    mutating func appended(_ entries: [DedupeSnapshot.Entry], newLength: Int) {
        length = newLength
        if let oldest = entries.map(\.firstSeen).min() {
            oldestFirstSeen = min(oldestFirstSeen ?? oldest, oldest)
        }
    }
}

extension RetiredIDsFile {
    /// The file as a load or a rewrite left it: `length` bytes holding `entries`, with
    /// nothing expired in it as of `now`.
    init(length: Int, holding entries: [DedupeSnapshot.Entry], compactedAt now: Int64) {
        self.init(length: length, oldestFirstSeen: entries.map(\.firstSeen).min(), compactedAt: now)
    }
}
