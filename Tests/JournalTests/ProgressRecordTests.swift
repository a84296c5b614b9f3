import Testing
import StoreRelayStorage
import StoreRelayCore

/// Delivery-progress records share the journal's batches but are never deduplicated.
@Suite struct ProgressRecordTests {
    @Test func progressRecordsAreStoredInOrderAndNeverDeduplicated() async throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let journal = try open(dir.journal)
        #expect(await journal.append(id: "evt-1", "event").position != nil)
        for step in ["attempt 1", "attempt 2", "delivered"] {
            #expect(await journal.appendProgress(id: "evt-1", step).position != nil)
        }
        // Progress for an id does not make a later event with that id a duplicate, nor the reverse.
        #expect(await journal.appendProgress(id: "evt-2", "early").position != nil)
        #expect(await journal.append(id: "evt-2", "event two").position != nil)
        #expect(await journal.append(id: "evt-1", "again").isDuplicate)
        journal.close()
        #expect(await journal.appendProgress(id: "evt-1", "late").error?.code == .closed)

        let reopened = try open(dir.journal)
        defer { reopened.close() }
        let records = reopened.recoveredRecords
        #expect(records.map(\.kind) == [.event, .progress, .progress, .progress, .progress, .event])
        #expect(records.map { String(decoding: $0.payload, as: UTF8.self) }
            == ["event", "attempt 1", "attempt 2", "delivered", "early", "event two"])
        #expect(await reopened.append(id: "evt-2", "again").isDuplicate)
    }

    @Test func progressAppendsNeedAnEventID() async throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let journal = try open(dir.journal)
        defer { journal.close() }
        #expect(await journal.appendProgress(id: "", "no id").error?.code == .invalidID)
    }
}

extension Journal {
    func appendProgress(id: String, _ text: String) async -> AppendOutcome {
        await withCheckedContinuation { continuation in
            appendProgress(id: id, payload: Array(text.utf8)) { continuation.resume(returning: $0) }
        }
    }
}
