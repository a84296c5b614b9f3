/// Which events still have deliveries to finish, and how many unfinished events each journal
/// segment holds: a segment whose count is zero (and every segment before it) can be retired.
struct EventTracker: Sendable {
    private(set) var remaining: [String: (segment: UInt64, keys: Set<String>)] = [:]
    private(set) var unfinishedBySegment: [UInt64: Int] = [:]
    private(set) var highestSegmentSeen: UInt64 = 0
    /// A retirement pass is already on its way.
    var retirementScheduled = false
    /// Set while `resume` reads the journal: events it has not reached yet are not tracked,
    /// so their segments would look finished.
    var resuming = false

    /// Starts tracking `eventId`, stored in `segment`, until every key in `keys` finishes.
    mutating func track(_ eventId: String, segment: UInt64, keys: Set<String>) {
        highestSegmentSeen = max(highestSegmentSeen, segment)
        guard !keys.isEmpty, remaining[eventId] == nil else { return }
        remaining[eventId] = (segment, keys)
        unfinishedBySegment[segment, default: 0] += 1
    }

    /// Marks one delivery finished; true when that finished the whole event.
    @discardableResult
    mutating func finish(_ eventId: String, key: String) -> Bool {
        guard var entry = remaining[eventId], entry.keys.remove(key) != nil else { return false }
        if !entry.keys.isEmpty {
            remaining[eventId] = entry
            return false
        }
        remaining[eventId] = nil
        let left = (unfinishedBySegment[entry.segment] ?? 1) - 1
        unfinishedBySegment[entry.segment] = left > 0 ? left : nil
        return true
    }

    /// The highest segment such that it and every segment before it hold no unfinished event,
    /// among `segments` and excluding `active` (still being written).
    func retirableUpTo(segments: [UInt64], active: UInt64) -> UInt64? {
        guard !resuming else { return nil }
        var result: UInt64?
        for segment in segments.sorted() where segment < active {
            guard unfinishedBySegment[segment] == nil else { break }
            result = segment
        }
        return result
    }

    var unfinishedCount: Int { remaining.count }
}
