import Foundation
import Testing
@testable import StoreRelayDelivery
import StoreRelayCore
import StoreRelayTestSupport

/// Pages of dead letters built from entries offered in batches (the cluster server's index
/// arrives one `HSCAN` at a time) are the pages a sort of the whole index gives.
@Suite struct DeadLetterPageTests {
    static func entry(_ id: Int, createdAt: Int64, destination: String) -> DeadLetterEntry {
        DeadLetterEntry(json: [
            "id": .string("dl-" + String(format: "%032x", id)), "eventId": .string("evt-\(id % 7)"), "createdAt": .integer(createdAt),
            "destination": .string(destination), "reason": .string("exhausted"),
        ])!
    }

    /// What the page must be: every match sorted newest first, after the cursor.
    static func reference(_ entries: [DeadLetterEntry], _ query: DeadLetterQuery, limit: Int,
                          after: DeadLetterEntry?) -> [DeadLetterEntry] {
        let sorted = entries.filter(query.matches).sorted { ($0.createdAt, $0.id) > ($1.createdAt, $1.id) }
        let rest = after.map { after in sorted.filter { ($0.createdAt, $0.id) < (after.createdAt, after.id) } } ?? sorted
        return Array(rest.prefix(limit))
    }

    @Test func batchesGiveTheSamePagesAsOneSort() {
        var random = SeededGenerator(seed: 27)
        for round in 0..<200 {
            let count = Int.random(in: 0...120, using: &random)
            // Few distinct times, so ties on createdAt are broken by id as the store does.
            let entries = (0..<count).map { Self.entry($0, createdAt: Int64.random(in: 0...20, using: &random),
                                                     destination: ["a", "b"].randomElement(using: &random)!) }
            let query = round % 3 == 0 ? DeadLetterQuery(destination: "a") : DeadLetterQuery()
            let limit = Int.random(in: 1...15, using: &random)
            var cursor: String?
            var previous: DeadLetterEntry?
            var seen: [DeadLetterEntry] = []
            repeat {
                var collector = DeadLetterEntry.PageCollector(query, limit: limit, cursor: cursor)
                var remaining = entries.shuffled(using: &random)[...]
                while !remaining.isEmpty {
                    let batch = Int.random(in: 1...10, using: &random)
                    collector.consider(remaining.prefix(batch))
                    remaining = remaining.dropFirst(batch)
                }
                let page = collector.page
                #expect(page.entries == Self.reference(entries, query, limit: limit, after: previous), "round \(round)")
                #expect(page.entries == DeadLetterEntry.page(entries, query, limit: limit, cursor: cursor).entries)
                seen += page.entries
                previous = page.entries.last
                cursor = page.nextCursor
                #expect(seen.count <= entries.count, "paging must end")
            } while cursor != nil && seen.count <= entries.count
            // Paging to the end visits every match once.
            #expect(seen == Self.reference(entries, query, limit: Int.max, after: nil), "round \(round)")
        }
    }
}
