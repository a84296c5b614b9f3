@testable import StoreRelayStorage
import StoreRelayTestSupport
import StoreRelayCore
import Testing

/// The record codec alone: round trips, every truncation, damage, and random bytes.
@Suite struct EventLogRecordTests {
    private func decode(_ bytes: [UInt8]) -> EventLogRecord.Decoded {
        bytes.withUnsafeBytes { EventLogRecord.decode($0) }
    }

    @Test func roundTripsEveryField() throws {
        var summary = Summaries.make(5)
        summary.deliveries[1].state = .deadLettered
        let bare = EventSummary(id: "x", receivedAt: Timestamp(milliseconds: -5), type: "TEST")
        let unicode = EventSummary(id: "é", receivedAt: Summaries.start, type: "ÜBER", subtype: "", environment: nil,
                                   bundleId: "com.ü", deliveries: [.init(destination: "d", state: .delivered)])
        for value in [summary, bare, unicode] {
            let bytes = try #require(EventLogRecord.encode(value))
            #expect(decode(bytes) == .record(value, length: bytes.count))
            #expect(decode(bytes + [0, 1, 2]) == .record(value, length: bytes.count), "what follows is the next record")
        }
    }

    @Test func everyTruncationIsIncomplete() throws {
        let bytes = try #require(EventLogRecord.encode(Summaries.make(8)))
        for cut in 0..<bytes.count {
            #expect(decode(Array(bytes[0..<cut])) == .incomplete, "cut at \(cut)")
        }
    }

    @Test func damageIsCaughtButAStateByteIsNot() throws {
        let bytes = try #require(EventLogRecord.encode(Summaries.make(8)))
        let statesStart = bytes.count - 2
        for index in 0..<statesStart {
            var damaged = bytes
            damaged[index] ^= 0x40
            // A damaged length may ask for more bytes than there are (incomplete: at a tail,
            // cut just the same); never a record.
            let expected: [EventLogRecord.Decoded] = index < 6 ? [.corrupt, .incomplete] : [.corrupt]
            #expect(expected.contains(decode(damaged)), "byte \(index)")
        }
        // The states are outside the checksum (rewritten in place); an unknown value reads as pending.
        var rewritten = bytes
        rewritten[statesStart] = 2
        rewritten[statesStart + 1] = 0xEE
        guard case .record(let summary, _) = decode(rewritten) else { Issue.record("not a record"); return }
        #expect(summary.deliveries.map(\.state) == [.deadLettered, .pending])
    }

    @Test func oversizedLengthsAreCorruptNotWaitedFor() throws {
        var bytes = try #require(EventLogRecord.encode(Summaries.make(8)))
        bytes.replaceSubrange(0..<4, with: [0xFF, 0xFF, 0xFF, 0x7F])
        #expect(decode(bytes) == .corrupt)
        var states = try #require(EventLogRecord.encode(Summaries.make(8)))
        states.replaceSubrange(4..<6, with: [0xFF, 0x7F])
        #expect(decode(states) == .corrupt)
    }

    @Test func refusesWhatCannotBeARecord() {
        var long = Summaries.make(1)
        long.bundleId = String(repeating: "a", count: 70_000)
        #expect(EventLogRecord.encode(long) == nil)
        var crowded = Summaries.make(1)
        crowded.deliveries = (0..<300).map { .init(destination: "d\($0)", state: .pending) }
        #expect(EventLogRecord.encode(crowded) == nil)
    }

    /// Random bytes, and records with random bytes spliced in: never a crash, and anything
    /// decoded as a record re-encodes to the bytes it came from (states aside).
    @Test func fuzz() throws {
        var random = SeededGenerator(seed: 0x5EED_E7E7)
        let valid = try #require(EventLogRecord.encode(Summaries.make(12)))
        for round in 0..<20_000 {
            var bytes: [UInt8]
            if round % 2 == 0 {
                bytes = (0..<Int.random(in: 0..<200, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
                if bytes.count >= 8 && round % 4 == 0 { bytes[6] = 0x45; bytes[7] = 0x4C }  // past the marker check
            } else {
                bytes = valid
                for _ in 0..<Int.random(in: 1...4, using: &random) {
                    bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
                }
                if round % 3 == 0 { bytes.removeLast(Int.random(in: 0..<bytes.count, using: &random)) }
            }
            if case .record(let summary, let length) = decode(bytes) {
                let again = try #require(EventLogRecord.encode(summary))
                #expect(again.count == length)
                #expect(Array(again.dropLast(summary.deliveries.count)) == Array(bytes[0..<(length - summary.deliveries.count)]))
            }
        }
    }

    @Test func cursorsParseOnlyWhatTheLogWrites() {
        #expect(EventLogCursor("12-0") == EventLogCursor(sequence: 12, ordinal: 0))
        #expect(EventLogCursor("12-0")?.description == "12-0")
        for bad in ["", "-", "1-", "-1", "1-2-3", "a-1", "1-b", "1--2", "+1-2", "1-+2", " 1-2", "1-2 ", "99999999999999999999999-1",
                    "1-99999999999", "١-٢", "1.5-2", "0x1-2"] {
            #expect(EventLogCursor(bad) == nil, "\(bad)")
        }
    }

    @Test func hashesAreStableAcrossRuns() {
        // Stored on disk: a change here would make every sealed index unreadable.
        #expect(EventKeyTable.hash("a") == 0xED81_70DE_1919_A24D)
        #expect(EventKeyTable.hash("otx-1") != EventKeyTable.hash("otx-2"))
        var table = EventKeyTable()
        for n in 0..<5_000 { table.insert("k\(n % 1000)", ordinal: UInt32(n)) }
        #expect(Set(table.candidates("k7")).isSuperset(of: [7, 1007, 2007, 3007, 4007]))
        #expect(table.hashes.count >= 10_000)
    }
}
