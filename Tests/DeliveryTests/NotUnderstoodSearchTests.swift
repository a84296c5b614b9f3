import Foundation
import Testing
@testable import StoreRelayDelivery
import StoreRelayVerification
import StoreRelayCore
import StoreRelayTestSupport

/// Issue 25, point 12: letters of notifications this build could not read are stored as
/// `quarantined`, yet found on their own (`reason=not-understood`), and one whose nested data
/// failed is found by the transaction ids inside it, which its event lacks.
@Suite struct NotUnderstoodSearchTests {
    func write(_ letter: DeadLetter, to store: DeadLetterStore) {
        let written = DispatchSemaphore(value: 0)
        store.write(letter) { _ in written.signal() }
        written.wait()
    }

    @Test func notUnderstoodLettersAreFilterableAndFoundByTheirTransactionIds() throws {
        let directory = try TestPaths.makeTemporaryDirectory("storerelay-not-understood").appendingPathComponent("dead-letters").path
        let store = try DeadLetterStore.open(directory: directory, logger: .disabled)
        let nested = try NestedDataNotification(uuid: "nested-1", transactionId: "2000000777000001", originalTransactionId: "2000000777000000")
        // What the gateway keeps: the outer payload only, so the event has no transaction ids.
        #expect(nested.event.originalTransactionId == nil)
        #expect(nested.event.json["transaction"] == .null)
        let unread = StoredNotification(event: nested.event, disposition: .quarantine(reason: nested.reason), destinations: [],
                                        body: nested.body, receivedAt: .now())
        let notUnderstood = DeadLetter(notification: unread, destination: nil, reason: .quarantined, detail: nested.reason,
                                       attempts: [], createdAt: .now())
        var misplacedNotification = try sampleNotification(destinations: [])
        misplacedNotification.disposition = .quarantine(reason: "app com.other.app is not declared")
        let misplaced = DeadLetter(notification: misplacedNotification, destination: nil, reason: .quarantined,
                                   detail: "app com.other.app is not declared", attempts: [], createdAt: .now())
        let exhausted = DeadLetter(notification: try sampleNotification(), destination: "a", reason: .exhausted, detail: "gave up",
                                   attempts: [], createdAt: .now())
        for letter in [notUnderstood, misplaced, exhausted] { write(letter, to: store) }

        func ids(_ query: DeadLetterQuery, in store: DeadLetterStore) -> Set<String> {
            Set(store.list(query, limit: 100, cursor: nil).items.map(\.id))
        }
        for current in [store, try DeadLetterStore.open(directory: directory, logger: .disabled)] {  // and indexed again at open
            #expect(ids(DeadLetterQuery(reason: .notUnderstood), in: current) == [notUnderstood.id])
            #expect(ids(DeadLetterQuery(reason: .stored(.quarantined)), in: current) == [notUnderstood.id, misplaced.id])
            #expect(ids(DeadLetterQuery(transactionId: "2000000777000001"), in: current) == [notUnderstood.id])
            #expect(ids(DeadLetterQuery(originalTransactionId: "2000000777000000"), in: current) == [notUnderstood.id])
            var pasted = DeadLetterQuery()
            pasted.text = "2000000777000001"
            #expect(ids(pasted, in: current) == [notUnderstood.id], "the page's search box")
        }

        // The filter by name, as the API, page and CLI spell it.
        #expect(DeadLetterReasonFilter(name: "not-understood") == .notUnderstood)
        #expect(DeadLetterReasonFilter(name: "quarantined") == .stored(.quarantined))
        #expect(DeadLetterReasonFilter(name: "not understood") == nil)
        #expect(DeadLetterReasonFilter.all.map(\.name).last == "not-understood")
    }

    /// Cluster mode keeps the index as JSON on the server: the flag and the nested ids
    /// survive the trip. Ids that are in the event are never replaced by nested ones.
    @Test func theIndexEntryKeepsWhatSearchesNeed() throws {
        let nested = try NestedDataNotification(uuid: "nested-2", transactionId: "t-1", originalTransactionId: "o-1")
        let letter = DeadLetter(
            notification: StoredNotification(event: nested.event, disposition: .quarantine(reason: nested.reason), destinations: [],
                                             body: nested.body, receivedAt: .now()),
            destination: nil, reason: .quarantined, detail: nested.reason, attempts: [], createdAt: .now())
        let entry = DeadLetterEntry(letter)
        #expect(entry.notUnderstood && entry.transactionId == "t-1" && entry.originalTransactionId == "o-1")
        #expect(DeadLetterEntry(json: entry.json) == entry)
        // The same body, readable: the event's ids stand, and the letter is not "not understood".
        let plain = DeadLetter(notification: try sampleNotification(), destination: "a", reason: .exhausted, detail: nil,
                               attempts: [], createdAt: .now())
        #expect(!DeadLetterEntry(plain).notUnderstood)
        #expect(DeadLetterEntry(json: ["id": "dl-1", "eventId": "e", "createdAt": 1, "reason": "quarantined"])?.notUnderstood == false,
                "an entry written before the flag existed")
    }
}
