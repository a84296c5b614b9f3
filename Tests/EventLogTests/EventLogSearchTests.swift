import Foundation
@testable import StoreRelayStorage
import StoreRelayTestSupport
import StoreRelayCore
import Testing

/// Search by each id kind, filters and paging, over the open segment and sealed ones.
@Suite struct EventLogSearchTests {
    /// 30 events, one per 10 minutes: with hourly segments, four sealed ones and the open one.
    private func filled(_ directory: ScratchDirectory, clock: ManualClock) async throws -> EventLog {
        let log = try EventLog.scratch(directory, clock: clock)
        log.add((0..<30).map { n in
            Summaries.make(n, at: Timestamp(milliseconds: Summaries.start.milliseconds + Int64(n) * 600_000),
                           type: n % 5 == 0 ? "SUBSCRIBED" : "DID_RENEW", app: n % 2 == 0 ? "com.acme.a" : "com.acme.b",
                           environment: n % 3 == 0 ? "sandbox" : "production")
        })
        await log.flushed()
        return log
    }

    @Test func findsAnEventByEachOfItsIds() async throws {
        let directory = ScratchDirectory()
        defer { directory.remove() }
        let log = try await filled(directory, clock: ManualClock(Summaries.start))
        defer { log.close() }
        #expect(log.segmentCount == 5)
        for n in [0, 7, 29] {  // the oldest sealed segment, a middle one, the open one
            #expect(try await log.page(EventLogQuery(q: Summaries.id(n))).items.map(\.id) == [Summaries.id(n)])
            #expect(try await log.page(EventLogQuery(q: "tx-\(n)")).items.map(\.id) == [Summaries.id(n)])
            let subscription = n / 3
            let expected = (subscription * 3..<subscription * 3 + 3).reversed().map(Summaries.id)
            #expect(try await log.page(EventLogQuery(q: "otx-\(subscription)")).items.map(\.id) == expected)
        }
        #expect(try await log.page(EventLogQuery(q: "tx-30")).items.isEmpty)
        #expect(try await log.page(EventLogQuery(q: "tx-1")).items.map(\.id) == [Summaries.id(1)], "exact, not a prefix")
    }

    @Test func filtersCombine() async throws {
        let directory = ScratchDirectory()
        defer { directory.remove() }
        let log = try await filled(directory, clock: ManualClock(Summaries.start))
        defer { log.close() }
        let sandboxA = try await log.all(EventLogQuery(app: "com.acme.a", environment: "sandbox"), limit: 100)
        #expect(sandboxA.map(\.id) == [24, 18, 12, 6, 0].map(Summaries.id))
        #expect(try await log.all(EventLogQuery(type: "SUBSCRIBED"), limit: 100).map(\.id) == [25, 20, 15, 10, 5, 0].map(Summaries.id))
        let since = Timestamp(milliseconds: Summaries.start.milliseconds + 10 * 600_000)
        let until = Timestamp(milliseconds: Summaries.start.milliseconds + 13 * 600_000)
        #expect(try await log.all(EventLogQuery(since: since, until: until), limit: 100).map(\.id) == [12, 11, 10].map(Summaries.id))
        #expect(try await log.all(EventLogQuery(q: "otx-5", type: "DID_RENEW"), limit: 100).map(\.id) == [17, 16].map(Summaries.id))
    }

    @Test func pagesCoverEverythingOnceNewestFirst() async throws {
        let directory = ScratchDirectory()
        defer { directory.remove() }
        let log = try await filled(directory, clock: ManualClock(Summaries.start))
        defer { log.close() }
        for limit in [1, 4, 7, 29, 30, 31] {
            #expect(try await log.all(limit: limit).map(\.id) == (0..<30).reversed().map(Summaries.id), "limit \(limit)")
        }
        let first = try await log.page(limit: 30)
        #expect(first.nextCursor == nil, "no cursor when nothing follows")
        let otx = try await log.all(EventLogQuery(q: "otx-2"), limit: 1)
        #expect(otx.map(\.id) == [8, 7, 6].map(Summaries.id))
    }

    @Test func aSmallScanBudgetStillReachesEveryMatch() async throws {
        let directory = ScratchDirectory()
        defer { directory.remove() }
        let clock = ManualClock(Summaries.start)
        let log = try EventLog.scratch(directory, clock: clock) { $0.scanBudget = 4 }
        defer { log.close() }
        log.add((0..<30).map { Summaries.make($0, type: $0 == 2 || $0 == 20 ? "REFUND" : "DID_RENEW") })
        await log.flushed()
        let first = try await log.page(EventLogQuery(type: "REFUND"), limit: 10)
        #expect(first.items.isEmpty && first.nextCursor != nil, "budget spent before a match: an empty page that goes on")
        #expect(try await log.all(EventLogQuery(type: "REFUND"), limit: 10).map(\.id) == [20, 2].map(Summaries.id))
    }

    @Test func deliveryStatesChangeInEverySegment() async throws {
        let directory = ScratchDirectory()
        defer { directory.remove() }
        let log = try await filled(directory, clock: ManualClock(Summaries.start))
        defer { log.close() }
        #expect(try await log.all(EventLogQuery(state: .pending), limit: 100).count == 30)
        // Before and after the write: the update of a record still in the batch buffer.
        log.add([Summaries.make(30, at: Timestamp(milliseconds: Summaries.start.milliseconds + 30 * 600_000 - 1))])
        log.setState(.delivered, eventId: Summaries.id(30), destination: "billing")
        for n in [0, 7, 29] {
            // With its receivedAt, only the segment whose range holds it is searched.
            let at = n == 7 ? Timestamp(milliseconds: Summaries.start.milliseconds + 7 * 600_000) : nil
            log.setState(.delivered, eventId: Summaries.id(n), destination: "billing", receivedAt: at)
            log.setState(.deadLettered, eventId: Summaries.id(n), destination: "analytics", receivedAt: at)
        }
        // A receivedAt no segment holds finds nothing to change.
        log.setState(.delivered, eventId: Summaries.id(8), destination: "billing", receivedAt: Timestamp(milliseconds: 5))
        log.setState(.delivered, eventId: Summaries.id(99), destination: "billing")  // unknown: ignored
        log.setState(.delivered, eventId: Summaries.id(1), destination: "nowhere")  // not routed there: ignored
        await log.flushed()
        for n in [0, 7, 29] {
            let item = try #require(try await log.page(EventLogQuery(q: Summaries.id(n))).items.first)
            #expect(item.deliveries == [.init(destination: "billing", state: .delivered), .init(destination: "analytics", state: .deadLettered)])
        }
        let item30 = try #require(try await log.page(EventLogQuery(q: Summaries.id(30))).items.first)
        #expect(item30.deliveries.map(\.state) == [.delivered, .pending])
        #expect(try await log.all(EventLogQuery(state: .deadLettered), limit: 100).map(\.id) == [29, 7, 0].map(Summaries.id))
        #expect(try await log.all(EventLogQuery(state: .delivered, destination: "billing"), limit: 100).count == 4)
        #expect(try await log.all(EventLogQuery(state: .delivered, destination: "analytics"), limit: 100).isEmpty)
        #expect(try await log.all(EventLogQuery(state: .pending), limit: 100).count == 28)
        #expect(try await log.page(EventLogQuery(q: Summaries.id(8))).items.first?.deliveries.first?.state == .pending)
        // Replayed: pending again.
        log.setState(.pending, eventId: Summaries.id(7), destination: "analytics")
        await log.flushed()
        #expect(try await log.page(EventLogQuery(q: Summaries.id(7))).items.first?.deliveries.map(\.state) == [.delivered, .pending])
    }

    @Test func aResubmittedEventKeepsItsFirstRecord() async throws {
        let directory = ScratchDirectory()
        defer { directory.remove() }
        let log = try EventLog.scratch(directory, clock: ManualClock(Summaries.start))
        defer { log.close() }
        log.add([Summaries.make(1)])
        log.setState(.delivered, eventId: Summaries.id(1), destination: "billing")
        log.add([Summaries.make(1)])
        await log.flushed()
        let items = try await log.page().items
        #expect(items.count == 1)
        #expect(items.first?.deliveries.first?.state == .delivered)
    }

    @Test func itemsHaveTheFieldsOfTheSpec() throws {
        let summary = Summaries.make(4)
        let json = summary.json
        #expect(json.objectValue?.members.map(\.0) == ["id", "receivedAt", "type", "subtype", "environment", "bundleId",
                                                       "originalTransactionId", "transactionId", "deliveries"])
        #expect(json["deliveries"]?.arrayValue?.first?["state"] == "pending")
        #expect(json["receivedAt"]?.stringValue == Summaries.make(4).receivedAt.iso8601)
        let page = EventLogPage(items: [summary], nextCursor: EventLogCursor(sequence: 3, ordinal: 9))
        #expect(page.json["nextCursor"] == "3-9")
        #expect(EventLogPage(items: [], nextCursor: nil).json["nextCursor"] == .null)
    }
}
