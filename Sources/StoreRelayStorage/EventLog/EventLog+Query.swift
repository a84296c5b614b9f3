#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import StoreRelayCore

/// Searching and listing, newest first. On `queue`, after the batches queued before.
extension EventLog {
    /// One page of the events matching `query`, newest first, after `cursor`.
    public func search(_ query: EventLogQuery, limit: Int, after cursor: EventLogCursor? = nil) async -> Result<EventLogPage, StorageError> {
        await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: self.searchOnQueue(query, limit: limit, after: cursor)) }
        }
    }

    /// `search`, blocking the caller (never on the log's own queue).
    public func searchNow(_ query: EventLogQuery, limit: Int, after cursor: EventLogCursor? = nil) -> Result<EventLogPage, StorageError> {
        queue.sync { searchOnQueue(query, limit: limit, after: cursor) }
    }

    /// The newest summary of event `id`, if the log has it.
    public func summaryNow(id: String) -> EventSummary? {
        guard case .success(let page) = searchNow(EventLogQuery(q: id), limit: 50) else { return nil }
        return page.items.first { $0.id == id }
    }

    /// How many segments the log holds (for tests and the benchmark).
    public var segmentCount: Int { queue.sync { state.sealed.count + (state.open == nil ? 0 : 1) } }

    func searchOnQueue(_ query: EventLogQuery, limit: Int, after cursor: EventLogCursor?) -> Result<EventLogPage, StorageError> {
        var query = query
        // What retention is about to delete is already gone for the reader.
        let cutoff = Timestamp(milliseconds: options.clock.now().milliseconds - options.retention.wholeMilliseconds)
        query.since = max(query.since ?? cutoff, cutoff)
        var found: [(EventSummary, EventLogCursor)] = []
        var budget = options.scanBudget
        do throws(StorageError) {
            for segment in readers() {
                if let cursor, segment.sequence > cursor.sequence { continue }
                guard query.overlaps(firstAt: segment.firstAt, lastAt: segment.lastAt) else { continue }
                let upper = cursor?.sequence == segment.sequence ? min(cursor!.ordinal, segment.recordCount) : segment.recordCount
                defer { segment.close() }
                let stop = try collect(query, from: segment, below: upper, limit: limit, into: &found, budget: &budget)
                if let stop { return .success(stop) }
            }
        } catch {
            return .failure(error)
        }
        return .success(EventLogPage(items: found.map(\.0), nextCursor: nil))
    }

    /// Adds the matches of `segment` below ordinal `upper` to `found`; the page once it is
    /// full (or the scan budget is spent), nil to go on with the next segment.
    private func collect(_ query: EventLogQuery, from segment: SegmentReader, below upper: Int, limit: Int,
                         into found: inout [(EventSummary, EventLogCursor)], budget: inout Int) throws(StorageError) -> EventLogPage? {
        func page() -> EventLogPage {
            EventLogPage(items: found.prefix(limit).map(\.0), nextCursor: found.count > limit ? found[limit - 1].1 : nil)
        }
        if let key = query.q {
            var seen = Set<UInt32>()
            for ordinal in try segment.candidates(key).sorted(by: >) where Int(ordinal) < upper && seen.insert(ordinal).inserted {
                if let summary = try segment.record(Int(ordinal)), query.matches(summary) {
                    found.append((summary, EventLogCursor(sequence: segment.sequence, ordinal: Int(ordinal))))
                    if found.count > limit { return page() }
                }
            }
            return nil
        }
        var ordinal = upper - 1
        while ordinal >= 0 {
            let chunk = max(0, ordinal - 255)...ordinal
            let offsets = try segment.offsets(chunk.lowerBound..<(chunk.upperBound + 1))
            for index in chunk.reversed() {
                let position = EventLogCursor(sequence: segment.sequence, ordinal: index)
                if let summary = try segment.record(atOffset: Int(offsets[index - chunk.lowerBound])), query.matches(summary) {
                    found.append((summary, position))
                    if found.count > limit { return page() }
                }
                budget -= 1
                if budget <= 0 {
                    // Out of budget: what was found, and where to go on (unless this was the oldest).
                    let more = index > 0 || segment.sequence > (state.sealed.first?.sequence ?? segment.sequence)
                    return EventLogPage(items: found.map(\.0), nextCursor: more ? position : nil)
                }
            }
            ordinal = chunk.lowerBound - 1
        }
        return nil
    }

    /// Every segment, newest first, as something to read records from.
    private func readers() -> [SegmentReader] {
        var readers: [SegmentReader] = []
        if let open = state.open, !open.offsets.isEmpty { readers.append(SegmentReader(open: open)) }
        for sealed in state.sealed.reversed() { readers.append(SegmentReader(sealed: sealed, directory: directory)) }
        return readers
    }
}
