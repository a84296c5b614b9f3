import Testing
@testable import StoreRelayDelivery
import StoreRelayStorage
import StoreRelayCore

/// A destination's book as its queue writes it and a checkpoint reads it.
@Suite struct BookKeeperTests {
    let start = RecordPosition(segment: 2, offset: 0)

    private func job(at offset: Int, replay: Bool = false) throws -> DeliveryJob {
        let notification = try sampleNotification()
        return DeliveryJob(notification: notification, destination: "hook", position: replay ? nil : RecordPosition(segment: 2, offset: offset),
                           body: [], attempts: [], due: notification.receivedAt, budgetStart: notification.receivedAt,
                           replayOf: replay ? "letter" : nil)
    }

    @Test func whatTheQueueTakesStaysUnfinishedUntilItIsFinished() throws {
        let keeper = BookKeeper(DestinationBook(cursor: start, backlog: 3))
        let taken = [try job(at: 10), try job(at: 20)]
        keeper.took(taken, cursor: RecordPosition(segment: 2, offset: 30))
        #expect(keeper.cursor == RecordPosition(segment: 2, offset: 30) && keeper.backlog == 1 && keeper.unfinishedCount == 2)
        keeper.took([], cursor: start)
        #expect(keeper.cursor == RecordPosition(segment: 2, offset: 30), "a cursor never moves back")
        var retried = taken[0]
        retried.attempts = [DeliveryAttempt(at: retried.due, status: 503, durationMs: 4)]
        retried.due = retried.due.advanced(by: .seconds(60))
        keeper.attempted(retried)
        let book = keeper.snapshot
        #expect(book.unfinished[taken[0].position!]?.attempts == retried.attempts)
        #expect(book.unfinished[taken[0].position!]?.due == retried.due)
        keeper.finished(at: taken[1].position)
        keeper.finished(at: nil)
        #expect(keeper.unfinishedCount == 1 && keeper.snapshot.oldestNeeded == taken[0].position)
    }

    @Test func replaysStayOutOfTheBook() throws {
        let keeper = BookKeeper(DestinationBook(cursor: start))
        let replay = try job(at: 0, replay: true)
        keeper.took([replay], cursor: start)
        keeper.attempted(replay)
        #expect(keeper.snapshot == DestinationBook(cursor: start))
    }

    @Test func catchingUpClearsTheBacklogAndWhatTheTailFound() {
        var book = DestinationBook(cursor: start, backlog: 2)
        book.replayed[RecordPosition(segment: 2, offset: 40)] = DestinationProgress(attempts: [], nextAttempt: nil, finished: true)
        book.replayed[RecordPosition(segment: 2, offset: 50)] = DestinationProgress(attempts: [], nextAttempt: nil, finished: false)
        let keeper = BookKeeper(DestinationBook(cursor: start))
        keeper.reset(to: book)
        keeper.passed()
        #expect(keeper.backlog == 3)
        #expect(keeper.takeReplayed(at: RecordPosition(segment: 2, offset: 40))?.finished == true)
        #expect(keeper.takeReplayed(at: RecordPosition(segment: 2, offset: 40)) == nil, "handed out once")
        keeper.caughtUp()
        #expect(keeper.backlog == 0 && keeper.snapshot.replayed.isEmpty)
    }
}
