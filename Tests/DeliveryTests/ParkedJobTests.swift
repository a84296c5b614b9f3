import Foundation
import Testing
@testable import StoreRelayDelivery
import StoreRelayConfig
import StoreRelayStorage
import StoreRelayCore
import StoreRelayTestSupport

/// A delivery engine over a real journal and dead-letter store in a fresh directory, keeping
/// only `whole` waiting jobs per destination in memory so that backlogs park in the journal.
final class ParkingHarness: Sendable {
    let directory: URL
    let journal: Journal
    let engine: DeliveryEngine

    /// Opens `directory` again when given (a restart), a fresh one otherwise.
    init(routes: String, whole: Int, directory: URL? = nil, readBackRetryDelay: Duration = .seconds(5),
         keepReplays: Bool = false, observer: any DeliveryObserver = NoDeliveryObserver()) throws {
        self.directory = try directory ?? TestPaths.makeTemporaryDirectory("storerelay-parking")
        journal = try Journal.open(directory: self.directory.appendingPathComponent("journal").path, logger: .disabled)
        let deadLetters = try DeadLetterStore.open(directory: self.directory.appendingPathComponent("dead-letters").path,
                                                   logger: .disabled)
        engine = try DeliveryEngine(configuration: try Self.configuration(routes), journal: journal,
                                    deadLetters: deadLetters, logger: .disabled, observer: observer,
                                    wholeJobsPerDestination: whole,
                                    readBackRetryDelay: readBackRetryDelay,
                                    replayDirectory: keepReplays ? self.directory.appendingPathComponent("replays").path : nil)
        // A fresh directory starts at once; a restart resumes when the test says.
        if directory == nil { try engine.resume() }
    }

    /// Resumes what the journal holds, as the gateway does at start-up.
    func resume() throws {
        try engine.resume()
        journal.releaseRecoveredRecords()
    }

    static func configuration(_ routes: String) throws -> GatewayConfiguration {
        try GatewayConfiguration.parse(text: "data /tmp/storerelay-parking-unused\n" + routes)
    }

    /// Journals `count` notifications for `destinations` and submits each once it is stored,
    /// as the intake does; returns them in order.
    func accept(_ count: Int, destinations: [String], typeJSON: String = "DID_RENEW", prefix: String = "event-",
                first: Int = 0, subscription: (Int) -> String? = { _ in nil }) throws -> [StoredNotification] {
        var accepted: [StoredNotification] = []
        for n in first..<(first + count) {
            var notification = try sampleNotification(id: "\(prefix)\(n)", destinations: destinations, typeJSON: typeJSON,
                                                      subscription: subscription(n))
            notification.receivedAt = .now()  // budgets (max-age) run from here
            let stored = Locked<RecordPosition?>(nil)
            let done = DispatchSemaphore(value: 0)
            journal.append(id: notification.id, payload: notification.encoded()) { outcome in
                if case .stored(let position) = outcome { stored.withLock { $0 = position } }
                done.signal()
            }
            done.wait()
            let position = try #require(stored.current)
            engine.submit(notification, position: position,
                          end: Journal.end(ofRecordAt: position, id: notification.id, payloadBytes: notification.encoded().count))
            accepted.append(notification)
        }
        return accepted
    }

    func stop() {
        let done = DispatchSemaphore(value: 0)
        engine.stop { done.signal() }
        done.wait()
        journal.close()
    }
}

/// Nothing listens here: connections are refused at once, so attempts fail and retry.
private let refusingURL = "http://127.0.0.1:1/down"

@Suite(.serialized) struct ParkedJobTests {
    /// A backlog larger than what a destination keeps whole, built while the destination is
    /// down, is handed to the destination's new definition by a reload, parked jobs included,
    /// and every event is delivered with its body once read back from the journal.
    @Test func parkedJobsAreReadBackAndDelivered() throws {
        let sink = try WebhookSink()
        let harness = try ParkingHarness(routes: """
            destination hook webhook \(refusingURL) {
                backoff 200ms 200ms
                max-attempts 1000
            }
            """, whole: 2)
        defer { harness.stop() }
        let accepted = try harness.accept(40, destinations: ["hook"])
        #expect(pollUntil(timeout: 20) { (harness.engine.status.first?.parked ?? 0) >= 30 })
        let readsBefore = harness.engine.reader.journalReads
        try harness.reconfigure(try ParkingHarness.configuration("""
            destination hook webhook \(sink.url("/ok")) {
                concurrency 2
            }
            """))
        #expect(pollUntil(timeout: 20) { harness.engine.unfinishedEvents == 0 })
        let delivered = sink.requests
        #expect(delivered.count == 40)
        for notification in accepted {
            let request = delivered.first { $0["headers"]?["webhook-id"]?.stringValue == notification.id }
            #expect(request?["body"]?.stringValue.map { Array($0.utf8) } == notification.event.jsonBytes())
        }
        // The parked ones were read back for their delivery (some found among the last read).
        #expect(harness.engine.reader.journalReads > readsBefore)
        // Finished events keep their event for the admin API.
        #expect(harness.engine.state(ofEvent: "event-39")?.deliveries.first?.phase == .delivered)
        #expect(harness.engine.state(ofEvent: "event-39")?.notification.event == accepted[39].event)
    }

    /// After a restart, a backlog is read back from the journal one event at a time and
    /// parked again beyond what a destination keeps whole; every event is still delivered.
    @Test func aBacklogResumesFromTheJournalAfterARestart() throws {
        let first = try ParkingHarness(routes: """
            destination hook webhook \(refusingURL) {
                backoff 100ms 100ms
                max-attempts 1000
            }
            """, whole: 2)
        let accepted = try first.accept(100, destinations: ["hook"])
        #expect(pollUntil(timeout: 20) { first.engine.status.first?.queueDepth == 100 })
        first.stop()
        // The checkpoint holds the destination's place and window, not the backlog.
        let saved = try #require(DeliveryCheckpoint(decoding: try Data(contentsOf: first.directory
            .appendingPathComponent("journal").appendingPathComponent(DeliveryCheckpoint.fileName)).map { $0 }))
        let book = try #require(saved.destinations["hook"])
        #expect(book.unfinished.count + book.backlog == 100)
        #expect(book.unfinished.count < 100, "most of the backlog stays behind the cursor")

        let sink = try WebhookSink()
        let second = try ParkingHarness(routes: """
            destination hook webhook \(sink.url("/ok")) {
                concurrency 2
            }
            """, whole: 2, directory: first.directory)
        defer { second.stop() }
        #expect(second.journal.recovered.filter { $0.kind == .event }.allSatisfy { $0.progressPayload == nil })
        try second.resume()
        #expect(pollUntil(timeout: 20) { second.engine.unfinishedEvents == 0 })
        let delivered = Set(sink.requests.compactMap { $0["headers"]?["webhook-id"]?.stringValue })
        #expect(delivered == Set(accepted.map(\.id)))
    }

    /// A parked event whose journal record is gone (a segment removed underneath the
    /// gateway) is dead-lettered `unreadable` after a bounded number of reads, instead of
    /// being read again forever (issue 13, point 4); the letter survives a reopen of the
    /// store and cannot be replayed.
    @Test func aParkedEventTheJournalCannotGiveBackIsDeadLetteredUnreadable() throws {
        let harness = try ParkingHarness(routes: """
            destination hook webhook \(refusingURL) {
                backoff 50ms 50ms
                max-attempts 100000
            }
            """, whole: 2, readBackRetryDelay: .milliseconds(20))
        defer { harness.stop() }
        _ = try harness.accept(8, destinations: ["hook"])
        // Every event taken into the window (parked by position), none left behind the cursor.
        #expect(pollUntil(timeout: 20) {
            (harness.engine.status.first?.parked ?? 0) >= 4 && harness.engine.books.current.destinations["hook"]?.backlog == 0
        })
        for segment in harness.journal.segments {
            try FileManager.default.removeItem(atPath: harness.directory.appendingPathComponent("journal")
                .appendingPathComponent(String(format: "%020llu.log", segment)).path)
        }
        #expect(pollUntil(timeout: 30) { harness.engine.deadLetters.list(reason: .unreadable).items.count >= 4 })
        // Jobs kept whole may be parked later and fail the same way: wait until no more come.
        var seen = -1
        #expect(pollUntil(timeout: 10, interval: 0.5) {
            let count = harness.engine.deadLetters.list(reason: .unreadable).items.count
            defer { seen = count }
            return count == seen
        })
        let letters = harness.engine.deadLetters.list(reason: .unreadable).items
        for letter in letters {
            #expect(letter.notification == nil)
            #expect(letter.destination == "hook")
            #expect(letter.json["event"] == .null)
            #expect(letter.detail?.contains("could not be read \(DestinationQueue.maxFailedReadBacks) times") == true)
            #expect(harness.engine.replay(deadLetterId: letter.id) == .unreadable)
        }
        let reopened = try DeadLetterStore.open(directory: harness.directory.appendingPathComponent("dead-letters").path,
                                                logger: .disabled)
        #expect(reopened.list(reason: .unreadable).items.count == letters.count)
        // Nothing else was dead-lettered: jobs kept whole carry their event and are retried.
        #expect(harness.engine.deadLetters.count == letters.count)
    }

    /// The window of recent events is `recent-events` long; an event that has left it still
    /// answers from its dead letters (issue 13, point 4), one that was simply delivered does
    /// not.
    @Test func anEventOlderThanTheWindowAnswersWithItsDeadLetters() throws {
        let sink = try WebhookSink()
        let harness = try ParkingHarness(routes: """
            recent-events 3
            destination ok webhook \(sink.url("/ok"))
            destination bad webhook \(sink.url("/bad"))
            """, whole: 10)
        defer { harness.stop() }
        let first = try harness.accept(1, destinations: ["ok", "bad"])[0]
        #expect(pollUntil(timeout: 20) { harness.engine.deadLetters.count == 1 && harness.engine.unfinishedEvents == 0 })
        let recent = try #require(harness.engine.state(ofEvent: first.id))
        #expect(recent.allDeliveriesKnown && recent.deliveries.count == 2)

        // Later events push it out of the window of three.
        for n in 1...4 {
            var event = try sampleNotification(id: "later-\(n)", destinations: ["ok"])
            event.receivedAt = .now()
            let later = event
            let done = DispatchSemaphore(value: 0)
            harness.journal.append(id: later.id, payload: later.encoded()) { outcome in
                if case .stored(let position) = outcome {
                    harness.engine.submit(later, position: position,
                                          end: Journal.end(ofRecordAt: position, id: later.id, payloadBytes: later.encoded().count))
                }
                done.signal()
            }
            done.wait()
        }
        #expect(pollUntil(timeout: 20) { harness.engine.unfinishedEvents == 0 && sink.requests(path: "/ok").count == 5 })
        let old = try #require(harness.engine.state(ofEvent: first.id), "an old event with a dead letter must still answer")
        #expect(!old.allDeliveriesKnown)
        #expect(old.json["deliveriesKnown"] == "dead-lettered only")
        #expect(old.deliveries.map(\.destination) == ["bad"])
        #expect(old.deliveries.first?.phase == .deadLettered)
        #expect(old.deliveries.first?.deadLetterId == harness.engine.deadLetters.letters(forEvent: first.id).first?.id)
        #expect(old.notification.event == first.event)
        // Of the four later ones (delivered in any order), the three that finished last are
        // remembered whole; the other, delivered and out of the window, is forgotten.
        let known = (1...4).compactMap { harness.engine.state(ofEvent: "later-\($0)") }
        #expect(known.count == 3)
        #expect(known.allSatisfy { $0.allDeliveriesKnown })
    }

    /// A bulk replay resumed after a crash takes only what it has not done yet: a letter its
    /// failed replay wrote again (`replayedBy` this replay) is not replayed a second time, a
    /// letter gone (delivered) is skipped, and the rest is replayed; then the record goes.
    @Test func aResumedBulkReplayTakesOnlyWhatItHasNotDone() throws {
        let sink = try WebhookSink()
        let harness = try ParkingHarness(routes: "destination hook webhook \(sink.url("/ok"))\nroute * * * -> hook",
                                         whole: 10, keepReplays: true)
        defer { harness.stop() }
        let store = harness.engine.deadLetters
        func write(_ letter: DeadLetter) {
            let done = DispatchSemaphore(value: 0)
            store.write(letter) { _ in done.signal() }
            done.wait()
        }
        let intent = "replay-0123456789abcdef"
        var alreadyDone = DeadLetter(notification: try sampleNotification(id: "done-again", destinations: ["hook"]),
                                     destination: "hook", reason: .exhausted, detail: "failed again", attempts: [],
                                     createdAt: .now())
        alreadyDone.replayedBy = [intent]
        let waiting = DeadLetter(notification: try sampleNotification(id: "still-waiting", destinations: ["hook"]),
                                 destination: "hook", reason: .exhausted, detail: "not replayed yet", attempts: [],
                                 createdAt: .now())
        write(alreadyDone)
        write(waiting)
        let gone = DeadLetter.id(eventId: "delivered-meanwhile", destination: "hook")
        let replays = harness.directory.appendingPathComponent("replays")
        try #"{"id":"\#(intent)","createdAt":"2026-11-25T06:00:00.000Z","letters":["\#(alreadyDone.id)","\#(waiting.id)","\#(gone)"]}"#
            .write(to: replays.appendingPathComponent(intent + ".json"), atomically: true, encoding: .utf8)

        harness.engine.resumeReplays()
        #expect(pollUntil(timeout: 20) { store.letter(id: waiting.id) == nil })
        #expect(sink.requests.compactMap { $0["headers"]?["webhook-id"]?.stringValue } == ["still-waiting"])
        #expect(store.letter(id: alreadyDone.id) != nil, "a letter the replay already wrote again was taken twice")
        #expect(pollUntil(timeout: 20) { ((try? FileManager.default.contentsOfDirectory(atPath: replays.path)) ?? []).isEmpty })
    }

    /// A letter that fails again in a bulk replay keeps every replay that wrote it
    /// (`replayedBy` grows), so an older replay resumed later does not take it again; a
    /// letter being replayed by hand is adopted by a bulk replay, not counted done.
    @Test func replayMarkersAccumulateAndHandReplaysAreAdopted() throws {
        let sink = try WebhookSink()
        let harness = try ParkingHarness(routes: """
            destination hook webhook \(sink.url("/slow/300/400")) {
                max-attempts 1
            }
            route * * * -> hook
            """, whole: 10, keepReplays: true)
        defer { harness.stop() }
        let store = harness.engine.deadLetters
        var letter = DeadLetter(notification: try sampleNotification(id: "marked", destinations: ["hook"]),
                                destination: "hook", reason: .exhausted, detail: "failed", attempts: [], createdAt: .now())
        letter.replayedBy = ["replay-aaaaaaaaaaaaaaaa"]
        let done = DispatchSemaphore(value: 0)
        store.write(letter) { _ in done.signal() }
        done.wait()

        #expect(harness.engine.replayAll(DeadLetterQuery()).replayed == 1)
        #expect(pollUntil(timeout: 20) { (store.letter(id: letter.id)?.replayedBy.count ?? 0) == 2 })
        let markers = store.letter(id: letter.id)?.replayedBy ?? []
        #expect(markers.first == "replay-aaaaaaaaaaaaaaaa" && markers.last?.hasPrefix("replay-") == true)
        let replays = harness.directory.appendingPathComponent("replays")
        func records() -> [String] { (try? FileManager.default.contentsOfDirectory(atPath: replays.path)) ?? [] }
        #expect(pollUntil(timeout: 20) { records().isEmpty })

        // Replayed by hand, then taken by a bulk replay: the bulk replay waits for it.
        let byHand = DeadLetter(notification: try sampleNotification(id: "by-hand", destinations: ["hook"]),
                                destination: "hook", reason: .exhausted, detail: "failed", attempts: [], createdAt: .now())
        store.write(byHand) { _ in done.signal() }
        done.wait()
        #expect(harness.engine.replay(deadLetterId: byHand.id) == .replayed(destinations: ["hook"]))
        #expect(harness.engine.replayAll(DeadLetterQuery(eventId: "by-hand")).replayed == 1)
        #expect(records().count == 1, "the bulk replay counted the letter replayed by hand as done")
        #expect(pollUntil(timeout: 20) { records().isEmpty })
        #expect(store.letter(id: byHand.id)?.replayedBy.count == 1)
    }

    /// An unfinished event is read back from the journal for the admin API, with its
    /// attempts so far.
    @Test func unfinishedEventsAreReadBackForTheAdminAPI() throws {
        let harness = try ParkingHarness(routes: """
            destination down webhook \(refusingURL) {
                backoff 50ms 100ms
                max-attempts 1000
            }
            """, whole: 1)
        defer { harness.stop() }
        let accepted = try harness.accept(5, destinations: ["down"])
        #expect(pollUntil(timeout: 20) { (harness.engine.state(ofEvent: "event-4")?.deliveries.first?.attempts.count ?? 0) >= 2 })
        let state = try #require(harness.engine.state(ofEvent: "event-4"))
        #expect(state.notification.event == accepted[4].event)
        #expect(state.deliveries.first?.phase == .pending)
        #expect(harness.engine.unfinishedEvents == 5)
    }

    /// A destination gone from the configuration at a restart dead-letters its window and
    /// the backlog behind its cursor (`unrouted`), then its place in the checkpoint goes.
    @Test func aDestinationGoneAtARestartDeadLettersItsBacklog() throws {
        let first = try ParkingHarness(routes: """
            destination down webhook \(refusingURL) {
                backoff 1h 1h
            }
            destination other webhook \(refusingURL) {
            }
            """, whole: 2)
        let accepted = try first.accept(30, destinations: ["down"])
        #expect(pollUntil(timeout: 20) { first.engine.status.first?.queueDepth == 30 })
        first.stop()

        let second = try ParkingHarness(routes: "destination other webhook \(refusingURL) {\n}\n", whole: 2,
                                        directory: first.directory)
        defer { second.stop() }
        try second.resume()
        #expect(pollUntil(timeout: 20) {
            second.engine.deadLetters.count == 30 && second.engine.books.current.destinations["down"] == nil
        })
        let letters = second.engine.deadLetters.list(limit: 100).items
        #expect(Set(letters.map(\.eventId)) == Set(accepted.map(\.id)))
        #expect(letters.allSatisfy { $0.reason == .unrouted && $0.destination == "down" && $0.detail?.contains("no longer configured") == true })
    }

    /// A destination removed by a reload dead-letters what it held, parked jobs included,
    /// each with Apple's body and the event read back from the journal.
    @Test func removingADestinationDeadLettersItsParkedJobsWhole() throws {
        let harness = try ParkingHarness(routes: """
            destination down webhook \(refusingURL) {
                backoff 1h 1h
            }
            destination other webhook \(refusingURL) {
            }
            """, whole: 2)
        defer { harness.stop() }
        let accepted = try harness.accept(10, destinations: ["down"])
        // Five attempts failed (then the breaker opened) and their next is an hour away: those
        // wait in the journal, with every job beyond the two kept whole.
        #expect(pollUntil(timeout: 20) {
            let status = harness.engine.status.first
            return status?.queueDepth == 10 && status?.inFlight == 0 && (status?.parked ?? 0) >= 5
        })
        try harness.reconfigure(try ParkingHarness.configuration("destination other webhook \(refusingURL) {\n}\n"))
        #expect(pollUntil(timeout: 20) { harness.engine.unfinishedEvents == 0 })
        let letters = harness.engine.deadLetters.list(limit: 100).items
        #expect(letters.count == 10)
        for notification in accepted {
            let letter = try #require(letters.first { $0.eventId == notification.id })
            #expect(letter.reason == .unrouted && letter.destination == "down")
            #expect(letter.notification?.body == notification.body && letter.notification?.event == notification.event)
        }
    }

    /// A parked job whose `max-age` passes is dead-lettered whole, like one kept in memory.
    @Test func parkedJobsPastTheirMaxAgeAreDeadLettered() throws {
        let harness = try ParkingHarness(routes: """
            destination down webhook \(refusingURL) {
                backoff 300ms 300ms
                max-attempts 1000
                max-age 1s
            }
            """, whole: 1)
        defer { harness.stop() }
        let accepted = try harness.accept(6, destinations: ["down"])
        #expect(pollUntil(timeout: 20) { harness.engine.unfinishedEvents == 0 })
        let letters = harness.engine.deadLetters.list(limit: 100).items
        #expect(letters.count == 6)
        #expect(letters.allSatisfy { $0.reason == .exhausted })
        #expect(Set(letters.map(\.eventId)) == Set(accepted.map(\.id)))
        #expect(letters.allSatisfy { $0.notification?.body == accepted[0].body })
    }
}

/// `WaitingRoom`'s rules, without queues or I/O.
@Suite struct WaitingRoomTests {
    let now = Timestamp(milliseconds: 1_000_000)

    func job(_ n: Int, dueIn milliseconds: Int64 = 0, journaled: Bool = true) throws -> DeliveryJob {
        DeliveryJob(notification: try sampleNotification(id: "e\(n)"), destination: "d",
                    position: journaled ? RecordPosition(segment: 1, offset: 16 + n) : nil, body: [1, 2, 3],
                    attempts: [], due: Timestamp(milliseconds: now.milliseconds + milliseconds), budgetStart: now)
    }

    @Test func keepsTheFirstJobsWholeAndParksTheRest() throws {
        var room = WaitingRoom(wholeLimit: 3)
        for n in 0..<10 { room.add(try job(n), now: now) }
        #expect(room.wholeCount == 3 && room.parkedCount == 7 && room.count == 10)
        // A job that cannot be parked (a replay: not in the journal) stays whole.
        room.add(try job(10, journaled: false), now: now)
        #expect(room.wholeCount == 4 && room.parkedCount == 7)
    }

    /// Replays are not in the journal, so they stay whole; they must not take the places of
    /// journaled jobs, or a crowd of them would keep every parked job waiting.
    @Test func replaysDoNotCountAgainstTheWholeLimit() throws {
        var room = WaitingRoom(wholeLimit: 2)
        for n in 0..<5 { room.add(try job(n, journaled: false), now: now) }
        for n in 5..<8 { room.add(try job(n), now: now) }
        #expect(room.wholeCount == 7 && room.parkedCount == 1)
        #expect(room.takeJobsToRead(now: now).isEmpty)
        for _ in 0..<6 { _ = room.popDue(now: now) }  // the five replays and e5
        #expect(room.takeJobsToRead(now: now).map(\.eventId) == ["e7"])
    }

    @Test func jobsDueLaterThanTheHorizonAreParkedEvenWithRoom() throws {
        var room = WaitingRoom(wholeLimit: 100)
        room.add(try job(0, dueIn: WaitingRoom.horizon + 1), now: now)
        room.add(try job(1, dueIn: WaitingRoom.horizon), now: now)
        #expect(room.wholeCount == 1 && room.parkedCount == 1)
        #expect(room.popDue(now: now) == nil)
        #expect(room.popDue(now: Timestamp(milliseconds: now.milliseconds + WaitingRoom.horizon))?.eventId == "e1")
    }

    @Test func parkedJobsAreReadBackAheadWithinTheLimits() throws {
        var room = WaitingRoom(wholeLimit: 20)
        // 40 due now, then 10 due in an hour (parked: beyond the horizon).
        for n in 0..<40 { room.add(try job(n), now: now) }
        for n in 40..<50 { room.add(try job(n, dueIn: 3_600_000), now: now) }
        #expect(room.wholeCount == 20 && room.parkedCount == 30)
        #expect(room.takeJobsToRead(now: now).isEmpty)  // no room: 20 whole

        for _ in 0..<20 { _ = room.popDue(now: now) }
        let reads = room.takeJobsToRead(now: now)
        #expect(reads.map(\.eventId) == (20..<(20 + WaitingRoom.readAhead)).map { "e\($0)" })
        #expect(room.reading == WaitingRoom.readAhead && room.count == 30)
        for read in reads {
            room.readFinished()
            room.putBack(read.restored(try sampleNotification(id: read.eventId), body: []))
        }
        // The rest due now is read next; the ones due in an hour are not read yet.
        #expect(room.takeJobsToRead(now: now).count == 4)
        for _ in 0..<4 { room.readFinished() }
        #expect(room.takeJobsToRead(now: now).isEmpty && room.parkedCount == 10)
        // Their wake-up is one horizon before they are due.
        while room.popDue(now: now) != nil {}
        #expect(room.nextWake(canStart: true)?.milliseconds == now.milliseconds + 3_600_000 - WaitingRoom.horizon)
    }

    @Test func wakesForTheEarliestStartOnlyWhenAttemptsCanStart() throws {
        var room = WaitingRoom(wholeLimit: 1)
        room.add(try job(0, dueIn: 50), now: now)
        room.add(try job(1, dueIn: 5_000), now: now)
        #expect(room.nextWake(canStart: true)?.milliseconds == now.milliseconds + 50)
        // No room to read (one whole job, the limit): only a start would wake it.
        #expect(room.nextWake(canStart: false) == nil)
        #expect(room.drain().count == 2 && room.count == 0)
    }
}

extension ParkingHarness {
    /// Reconfigures the engine and waits until it has (tests may wait).
    func reconfigure(_ configuration: GatewayConfiguration) throws {
        let outcome = Locked<DeliveryError??>(nil)
        let done = DispatchSemaphore(value: 0)
        engine.reconfigure(configuration) { error in
            outcome.withLock { $0 = .some(error) }
            done.signal()
        }
        #expect(done.wait(timeout: .now() + 30) == .success, "the reconfiguration finished")
        if case .some(.some(let error)) = outcome.current { throw error }
    }
}
