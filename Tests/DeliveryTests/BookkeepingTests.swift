import Foundation
import Testing
@testable import StoreRelayDelivery
import StoreRelayVerification
import StoreRelayCore
import StoreRelayStorage
import StoreRelayTestSupport

/// Signed `signedAgo` before now (a minute by default): a replay re-applies the staleness
/// rule, so a notification signed before the dedupe window is replayed only when forced.
/// `typeJSON` is the notificationType as JSON string content, escapes and all.
func sampleNotification(id: String = UUID().uuidString.lowercased(), destinations: [String] = ["a"],
                        signedAgo: Duration = .seconds(60), typeJSON: String = "DID_RENEW",
                        subscription: String? = nil) throws -> StoredNotification {
    let signed = Timestamp.now().milliseconds - signedAgo.wholeMilliseconds
    let payload = try JSONValue.parse(#"{"notificationType":"\#(typeJSON)","notificationUUID":"\#(id)","version":"2.0","signedDate":\#(signed),"data":{"bundleId":"com.acme.journal","environment":"Sandbox","appAppleId":1}}"#)
    let transaction = subscription.map { JSONValue.object(JSONObject([("originalTransactionId", .string($0))])) }
    let content = NotificationContent(payload: payload.objectValue!, transaction: transaction, environment: .sandbox)
    let event = try NormalizedEvent(content: content, receivedAt: Timestamp(milliseconds: 1_700_000_000_500))
    return StoredNotification(event: event, disposition: .accept, destinations: destinations,
                              body: Array(#"{"signedPayload":"x.y.z"}"#.utf8), receivedAt: Timestamp(milliseconds: 1_700_000_000_500))
}

@Suite struct RecordFormatTests {
    @Test func storedNotificationsRoundTrip() throws {
        let original = try sampleNotification(destinations: ["a", "b"])
        let decoded = try #require(StoredNotification(decoding: original.encoded()))
        #expect(decoded.id == original.id && decoded.destinations == ["a", "b"] && decoded.body == original.body)
        #expect(decoded.event == original.event && decoded.receivedAt == original.receivedAt)
        var quarantined = original
        quarantined.disposition = .quarantine(reason: "app x is not declared")
        #expect(StoredNotification(decoding: quarantined.encoded())?.disposition == .quarantine(reason: "app x is not declared"))
        #expect(StoredNotification(decoding: Array("{}".utf8)) == nil)
    }

    /// The record is written in one pass, the body escaped straight from its bytes (issue
    /// 31): byte for byte what escaping it through a String gave, for a V1 body with
    /// escapes, quotes and non-ASCII text as well as a V2 one.
    @Test func theRecordEscapesTheBodyAsTheSerializerDoes() throws {
        let bodies = [
            #"{"signedPayload":"eyJhbGciOiJFUzI1NiJ9.eyJhIjoxfQ.c2ln"}"#,
            "{\"notification_type\":\"DID_RENEW\",\"note\":\"tab\tquote\\\"back\\\\slash é ü \u{2028}\u{2029}\u{2026}\u{1F600}\"}",
            "",
        ]
        for text in bodies {
            var notification = try sampleNotification(destinations: ["a"])
            notification.body = Array(text.utf8)
            let record = notification.encoded()
            let decoded = try #require(StoredNotification(decoding: record))
            #expect(decoded.body == notification.body)
            // The tail of the record is `"body":<the body as a JSON string>}`.
            let expectedTail = Array(#","body":"#.utf8) + JSONValue.string(text).serializedBytes() + [UInt8(ascii: "}")]
            #expect(Array(record.suffix(expectedTail.count)) == expectedTail)
        }
    }

    @Test func progressRecordsRoundTrip() {
        let attempt = DeliveryAttempt(at: Timestamp(milliseconds: 5), status: 503, error: "HTTP 503", durationMs: 12)
        for record in [
            DeliveryProgress.attempted(destination: "a", attempt: attempt, next: Timestamp(milliseconds: 99)),
            .delivered(destination: "b"), .deadLettered(destination: "", deadLetterId: "dl-1"),
        ] {
            #expect(DeliveryProgress(decoding: record.encoded()) == record)
        }
        #expect(DeliveryProgress(decoding: Array(#"{"d":"a","r":"what"}"#.utf8)) == nil)
    }

    @Test func dueHeapReturnsEarliestFirstAndKeepsArrivalOrder() throws {
        var heap = DueHeap<DeliveryJob>()
        let notification = try sampleNotification()
        var random = SystemRandomNumberGenerator()
        var dues: [Int64] = []
        for index in 0..<500 {
            let due = Int64.random(in: 0...50, using: &random)
            dues.append(due)
            heap.insert(DeliveryJob(notification: notification, destination: "\(index)", body: [], attempts: [],
                                    due: Timestamp(milliseconds: due), budgetStart: Timestamp(milliseconds: 0)))
        }
        var popped: [(Int64, Int)] = []
        while let job = heap.popEarliest() { popped.append((job.due.milliseconds, Int(job.destination)!)) }
        #expect(popped.count == 500)
        for (a, b) in zip(popped, popped.dropFirst()) {
            let ordered = a.0 < b.0 || (a.0 == b.0 && a.1 < b.1)
            #expect(ordered)
        }
    }
}

@Suite struct DeadLetterStoreTests {
    /// Dead letters hold Apple's bodies and no consumer reads them: the directory is 0700
    /// (also one an earlier version made 0750) and each letter 0600.
    @Test func deadLettersArePrivateToTheGateway() throws {
        let parent = try TestPaths.makeTemporaryDirectory("storerelay-dlq-mode").path
        func mode(_ path: String) throws -> Int {
            try #require(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
        }
        let fresh = parent + "/fresh/dead-letters"
        let store = try DeadLetterStore.open(directory: fresh, logger: .disabled)
        #expect(try mode(fresh) == 0o700)
        let letter = DeadLetter(notification: try sampleNotification(), destination: "a", reason: .exhausted, detail: "d",
                                attempts: [], createdAt: Timestamp(milliseconds: 1_000))
        let done = DispatchSemaphore(value: 0)
        store.write(letter) { _ in done.signal() }
        done.wait()
        #expect(try mode(fresh + "/" + letter.id + ".json") == 0o600)

        let older = parent + "/older"
        try FileManager.default.createDirectory(atPath: older, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o750])
        _ = try DeadLetterStore.open(directory: older, logger: .disabled)
        #expect(try mode(older) == 0o700)
    }

    @Test func writeListPageShowAndDelete() throws {
        let directory = try TestPaths.makeTemporaryDirectory("storerelay-dlq").path
        let store = try DeadLetterStore.open(directory: directory, logger: .disabled)
        var ids: [String] = []
        for index in 0..<7 {
            let letter = DeadLetter(
                notification: try sampleNotification(), destination: index % 2 == 0 ? "a" : "b",
                reason: index < 5 ? .exhausted : .rejected, detail: "d\(index)",
                attempts: [DeliveryAttempt(at: Timestamp(milliseconds: 1000), status: 503, error: "HTTP 503", durationMs: 4)],
                createdAt: Timestamp(milliseconds: 1_000_000 + Int64(index)))
            let done = DispatchSemaphore(value: 0)
            store.write(letter) { result in
                #expect((try? result.get()) != nil)
                done.signal()
            }
            done.wait()
            ids.append(letter.id)
        }
        // Newest first, paged with an opaque cursor, nothing repeated or skipped.
        var seen: [String] = []
        var cursor: String?
        repeat {
            let page = store.list(limit: 3, cursor: cursor)
            #expect(page.items.count <= 3)
            seen += page.items.map(\.id)
            cursor = page.nextCursor
        } while cursor != nil
        #expect(seen == ids.reversed())
        #expect(store.list(destination: "a").items.count == 4)
        #expect(store.list(reason: .rejected).items.map(\.id) == [ids[6], ids[5]])
        let shown = try #require(store.letter(id: ids[0]))
        #expect(shown.detail == "d0" && shown.attempts.first?.status == 503)

        // Reopening indexes the files again.
        let reopened = try DeadLetterStore.open(directory: directory, logger: .disabled)
        #expect(reopened.count == 7)
        #expect(reopened.delete(id: ids[0]))
        #expect(!reopened.delete(id: ids[0]))
        #expect(reopened.letter(id: ids[0]) == nil)
        #expect(!FileManager.default.fileExists(atPath: directory + "/" + ids[0] + ".json"))
    }

    @Test func identifiersNeverReachTheFileSystemUnchecked() throws {
        let directory = try TestPaths.makeTemporaryDirectory("storerelay-dlq")
        let store = try DeadLetterStore.open(directory: directory.path, logger: .disabled)
        let outside = directory.deletingLastPathComponent().appendingPathComponent("victim-\(UUID().uuidString).json")
        try "{}".write(to: outside, atomically: true, encoding: .utf8)
        for id in ["../\(outside.lastPathComponent.dropLast(5))", "..", "/etc/passwd", "dl-../../x", "dl-" + String(repeating: "g", count: 32), ""] {
            #expect(store.letter(id: id) == nil)
            #expect(!store.delete(id: id))
        }
        #expect(FileManager.default.fileExists(atPath: outside.path))
        #expect(store.list(cursor: "not-a-cursor").items.isEmpty)
    }

    @Test func deadLetterIdsAreStablePerEventAndDestination() {
        #expect(DeadLetter.id(eventId: "e", destination: "a") == DeadLetter.id(eventId: "e", destination: "a"))
        #expect(DeadLetter.id(eventId: "e", destination: "a") != DeadLetter.id(eventId: "e", destination: "b"))
        #expect(DeadLetter.id(eventId: "e", destination: nil) != DeadLetter.id(eventId: "e", destination: "a"))
        #expect(DeadLetterStore.isValidID(DeadLetter.id(eventId: "e", destination: nil)))
    }
}

@Suite struct EventLedgerTests {
    /// Finished events beyond the capacity go, oldest first; unfinished ones stay while they
    /// are among the last `2 × capacity` recorded (older ones wait in their destination's
    /// backlog, which counts them), so a long backlog never grows the ledger.
    @Test func keepsRecentUnfinishedEventsAndTheNewestFinishedOnes() throws {
        var ledger = EventLedger(capacity: 10)
        var pending: [StoredNotification] = []
        for n in 0..<15 {
            pending.append(try sampleNotification(id: "pending-\(n)"))
            ledger.record(pending[n], position: RecordPosition(segment: 1, offset: 16 + n), destinations: ["slow"])
        }
        for n in 0..<15 { #expect(ledger.entry(of: "pending-\(n)") != nil) }
        for n in 0..<5 {
            let done = try sampleNotification(id: "done-\(n)")
            ledger.record(done, position: RecordPosition(segment: 2, offset: 16 + n), destinations: ["fast"])
            ledger.update(done, destination: "fast") { $0.phase = .delivered }
        }
        for n in 0..<15 { #expect(ledger.entry(of: "pending-\(n)") != nil, "pending-\(n) is among the last 20") }

        // A pending event that finishes later counts among the newest finished ones.
        ledger.update(pending[14], destination: "slow") { $0.phase = .deadLettered }
        for n in 5..<100 {
            let done = try sampleNotification(id: "done-\(n)")
            ledger.record(done, position: RecordPosition(segment: 2, offset: 16 + n), destinations: ["fast"])
            ledger.update(done, destination: "fast") { $0.phase = .delivered }
        }
        for n in 90..<100 { #expect(ledger.entry(of: "done-\(n)") != nil, "done-\(n)") }
        #expect((0..<90).allSatisfy { ledger.entry(of: "done-\($0)") == nil })
        #expect(ledger.entry(of: "pending-0") == nil, "the oldest unfinished events are forgotten")
        #expect((0..<15).filter { ledger.entry(of: "pending-\($0)") != nil }.count <= 10, "at most twice the capacity in all")
    }

    /// An unfinished event in the journal is remembered by position only (its record is read
    /// back when asked for); once finished it keeps its event, without Apple's body, because
    /// its segment may be retired.
    @Test func unfinishedEventsKeepOnlyTheirPosition() throws {
        var ledger = EventLedger(capacity: 10)
        let notification = try sampleNotification(id: "e1", destinations: ["a", "b"])
        let position = RecordPosition(segment: 3, offset: 160)
        ledger.record(notification, position: position, destinations: ["a", "b"])
        var entry = try #require(ledger.entry(of: "e1"))
        #expect(entry.summary == nil && entry.position == position)

        ledger.update(notification, destination: "a") { $0.phase = .delivered }
        #expect(ledger.entry(of: "e1")?.summary == nil)
        ledger.update(notification, destination: "b") { $0.phase = .deadLettered }
        entry = try #require(ledger.entry(of: "e1"))
        #expect(entry.position == nil && entry.summary?.id == "e1" && entry.summary?.body == [])
        #expect(entry.summary?.event == notification.event)

        // A replay is not in the journal: it keeps its event from the start.
        let replayed = try sampleNotification(id: "e2")
        ledger.record(replayed, position: nil, destinations: ["a"])
        #expect(ledger.entry(of: "e2")?.summary?.event == replayed.event)
    }
}
