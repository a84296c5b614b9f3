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

    /// Chunks appended by retirements beyond this many are merged: each spans every digest, so
    /// a "maybe" from the filter reads one block of each (under the journal lock). A merge
    /// rewrites the file, so its cost is spread over this many retirements.
    static let mostAppendedChunks = 16
    /// After a failed rewrite, none is tried again for this long (a full disk would otherwise
    /// make every retirement read and rewrite the whole file in vain).
    static let retryAfterFailureMilliseconds: Int64 = 300_000

    /// When the last rewrite failed, if it did.
    var failedAt: Int64?
    /// The index last saved to `seen-ids.index`.
    var savedIndex: ObjectIdentifier?

    /// Whether to rewrite the file: it holds an entry older than `cutoff` and was not
    /// compacted lately, or `index` has grown too many appended chunks or outgrown its filter.
    func needsCompaction(cutoff: Int64, now: Int64, index: RetiredIDIndex) -> Bool {
        if let failedAt, now - failedAt < Self.retryAfterFailureMilliseconds { return false }
        if index.appendedChunks > Self.mostAppendedChunks || index.filter.isOverfull { return true }
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
    /// The file as a load or a rewrite left it: `length` bytes described by `index`, with
    /// nothing expired in it as of `now`.
    init(length: Int, holding index: RetiredIDIndex, compactedAt now: Int64) {
        self.init(length: length, oldestFirstSeen: index.oldestFirstSeen, compactedAt: now)
    }
}
