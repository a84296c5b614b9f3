import StoreRelayNet
import StoreRelayStorage
import StoreRelayCore

/// Reading the server's event log: `q` through one `log:key:` set, a listing through
/// `log:time`, newest first, filtered here.
extension ClusterEventLog {
    /// One ordered entry of a sorted set: `receivedAt` ms and event id.
    typealias Entry = (at: Int64, id: String)

    public func search(_ query: EventLogQuery, limit: Int, after cursor: EventLogCursor?) async -> Result<EventLogPage, StorageError> {
        var query = query
        let cutoff = clock.now().milliseconds - retention.wholeMilliseconds
        query.since = Timestamp(milliseconds: max(query.since?.milliseconds ?? cutoff, cutoff))
        do throws(StorageError) {
            if let q = query.q { return .success(try await lookup(q, query, limit: limit, after: cursor)) }
            return .success(try await list(query, limit: limit, after: cursor))
        } catch {
            return .failure(error)
        }
    }

    /// Every event `q` names (the event itself, and those of the subscription or transaction).
    private func lookup(_ q: String, _ query: EventLogQuery, limit: Int, after cursor: EventLogCursor?) async throws(StorageError) -> EventLogPage {
        let replies = await client.replies([
            RESPCommand("ZREVRANGEBYSCORE", keys.logKey(q), "+inf", String(query.since!.milliseconds), "WITHSCORES"),
            RESPCommand("HGET", keys.logEvent(q), "_"),
        ])
        guard replies.count == 2, case .success(let set) = replies[0], case .success(let own) = replies[1] else {
            throw StorageError.unavailable("the cluster server did not answer the event log's lookup")
        }
        var entries = Self.entries(set)
        if let summary = own.bytes.flatMap({ Self.decode($0, states: [:]) }) { entries.append((summary.receivedAt.milliseconds, q)) }
        entries.sort { ($0.at, $0.id) > ($1.at, $1.id) }
        var seen = Set<String>()
        let all = entries.filter { seen.insert($0.id).inserted }
        entries = Self.after(cursor, all)
        let summaries = try await read(entries.map(\.id))
        var found: [(EventSummary, Entry)] = []
        for (entry, summary) in zip(entries, summaries) {
            guard let summary, query.matches(summary) else { continue }
            found.append((summary, entry))
            if found.count > limit { break }
        }
        return Self.page(found, limit: limit, all: all)
    }

    /// The newest events first, `scanBudget` records at most per request.
    private func list(_ query: EventLogQuery, limit: Int, after cursor: EventLogCursor?) async throws(StorageError) -> EventLogPage {
        let top = query.until.map { "(" + String($0.milliseconds) } ?? "+inf"
        var found: [(EventSummary, Entry)] = []
        var last = cursor
        // Where the limit-th item was: the next page starts after it.
        var atLimit: EventLogCursor?
        var read = 0
        while read < scanBudget {
            // From the cursor's time, skipping what the cursor already gave at that time.
            let max = last.map { String($0.sequence) } ?? top
            let skip = last?.ordinal ?? 0
            let batch = 200
            guard let reply = await client.reply(RESPCommand("ZREVRANGEBYSCORE", keys.logTime, max, String(query.since!.milliseconds),
                                                             "WITHSCORES", "LIMIT", String(skip), String(batch))) else {
                throw StorageError.unavailable("the cluster server did not answer the event log's listing")
            }
            let entries = Self.entries(reply)
            if entries.isEmpty { break }
            let summaries = try await self.read(entries.map(\.id))
            for (entry, summary) in zip(entries, summaries) {
                read += 1
                last = Self.advance(last, to: entry)
                if let summary, query.matches(summary) {
                    found.append((summary, entry))
                    if found.count == limit { atLimit = last }
                    if found.count > limit { return EventLogPage(items: found.prefix(limit).map(\.0), nextCursor: atLimit) }
                }
                if read >= scanBudget { return EventLogPage(items: found.map(\.0), nextCursor: last) }
            }
            if entries.count < batch { break }
        }
        return EventLogPage(items: found.map(\.0), nextCursor: nil)
    }

    /// The summaries of `ids` with their states (nil for one that expired meanwhile).
    private func read(_ ids: [String]) async throws(StorageError) -> [EventSummary?] {
        guard !ids.isEmpty else { return [] }
        let replies = await client.replies(ids.map { RESPCommand("HGETALL", keys.logEvent($0)) })
        guard replies.count == ids.count else { throw StorageError.unavailable("the cluster server did not answer the event log's read") }
        return replies.map { reply in
            guard case .success(let value) = reply, let pairs = value.elements else { return nil }
            var fields: [String: [UInt8]] = [:]
            var index = 0
            while index + 1 < pairs.count {
                if let name = pairs[index].string, let bytes = pairs[index + 1].bytes { fields[name] = bytes }
                index += 2
            }
            guard let json = fields["_"] else { return nil }
            var states: [String: String] = [:]
            for (name, value) in fields where name.hasPrefix("d:") { states[String(name.dropFirst(2))] = String(decoding: value, as: UTF8.self) }
            return Self.decode(json, states: states)
        }
    }

    /// `WITHSCORES` pairs as entries, in the server's order.
    static func entries(_ reply: RESPValue) -> [Entry] {
        let values = reply.elements ?? []
        var entries: [Entry] = []
        var index = 0
        while index + 1 < values.count {
            if let id = values[index].string, let score = values[index + 1].string.flatMap({ Double($0) }) { entries.append((Int64(score), id)) }
            index += 2
        }
        return entries
    }

    /// `entries` (newest first) after `cursor`: older than its time, or at its time past the
    /// first `ordinal` given.
    static func after(_ cursor: EventLogCursor?, _ entries: [Entry]) -> [Entry] {
        guard let cursor else { return entries }
        var atCursor = 0
        return entries.filter { entry in
            if entry.at > Int64(cursor.sequence) { return false }
            guard entry.at == Int64(cursor.sequence) else { return true }
            atCursor += 1
            return atCursor > cursor.ordinal
        }
    }

    /// The cursor after `entry`, coming from `last`.
    static func advance(_ last: EventLogCursor?, to entry: Entry) -> EventLogCursor {
        if let last, Int64(last.sequence) == entry.at { return EventLogCursor(sequence: last.sequence, ordinal: last.ordinal + 1) }
        return EventLogCursor(sequence: UInt64(max(0, entry.at)), ordinal: 1)
    }

    /// A page of `found` (a `lookup`; `all` is every candidate, newest first, before the cursor).
    private static func page(_ found: [(EventSummary, Entry)], limit: Int, all: [Entry]) -> EventLogPage {
        guard found.count > limit else { return EventLogPage(items: found.map(\.0), nextCursor: nil) }
        // Counted over every candidate at the last item's time, matching or not, as `after` skips.
        let lastGiven = found[limit - 1].1
        let atTime = all.filter { $0.at == lastGiven.at }
        let position = (atTime.firstIndex { $0.id == lastGiven.id } ?? 0) + 1
        return EventLogPage(items: found.prefix(limit).map(\.0), nextCursor: EventLogCursor(sequence: UInt64(max(0, lastGiven.at)), ordinal: position))
    }
}
