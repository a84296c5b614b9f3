import Foundation
import Testing
import StoreRelayStorage
import StoreRelayCore

/// `record(at:)`: reading one stored record back by the position its append answered.
@Suite struct ReadBackTests {
    @Test func storedRecordsAreReadBackByPosition() async throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let journal = try open(dir.journal)
        defer { journal.close() }
        let big = [UInt8]((0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let first = try #require(await journal.append(id: "evt-1", "one").position)
        let second = try #require(await journal.append(id: "evt-2", payload: big).position)
        let progress = try #require(await journal.appendProgress(id: "evt-1", "attempted").position)

        let one = try journal.record(at: first)
        #expect(one.id == "evt-1" && one.kind == .event && one.payload == Array("one".utf8) && one.position == first)
        #expect(try journal.record(at: second).payload == big)
        let step = try journal.record(at: progress)
        #expect(step.kind == .progress && step.id == "evt-1" && step.payload == Array("attempted".utf8))
    }

    @Test func aPositionThatIsNotARecordIsReportedNotGuessed() async throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let journal = try open(dir.journal)
        defer { journal.close() }
        let stored = try #require(await journal.append(id: "evt-1", "payload").position)
        let inside = RecordPosition(segment: stored.segment, offset: stored.offset + 3)
        let beyond = RecordPosition(segment: stored.segment, offset: stored.offset + 10_000)
        for position in [inside, beyond] {
            #expect(throws: StorageError.self) { try journal.record(at: position) }
            #expect((try? journal.record(at: position)) == nil)
        }
        do {
            _ = try journal.record(at: inside)
            Issue.record("bytes inside a record were read as one")
        } catch {
            #expect(error.code == .corruptSegment)
        }
        do {
            _ = try journal.record(at: RecordPosition(segment: 99, offset: 16))
            Issue.record("a missing segment was read")
        } catch {
            #expect(error.code == .io && error.errno == ENOENT)
        }
    }

    @Test func damagedBytesFailTheChecksum() async throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let journal = try open(dir.journal)
        defer { journal.close() }
        let stored = try #require(await journal.append(id: "evt-1", "payload").position)
        let path = segmentPath(dir.journal, stored.segment)
        var bytes = try #require(FileManager.default.contents(atPath: path)).map { $0 }
        bytes[bytes.count - 1] ^= 0xFF
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        do {
            _ = try journal.record(at: stored)
            Issue.record("a damaged record was read")
        } catch {
            #expect(error.code == .corruptSegment && error.message.contains("checksum"))
        }
    }
}
