import Foundation
import Testing
@testable import StoreRelayDelivery
import StoreRelayStorage
import StoreRelayCore
import StoreRelayTestSupport

/// `order per-subscription` (SPEC "Delivery controls"): the holds themselves, then a real
/// engine delivering to a real webhook sink that fails some attempts.
@Suite struct SubscriptionOrderTests {
    private func job(_ offset: Int, _ subscription: String?) -> ParkedJob {
        var job = ParkedJob(eventId: "e\(offset)", destination: "d", position: RecordPosition(segment: 1, offset: offset),
                            attempts: [], due: Timestamp(milliseconds: 10), attemptsBeforeBudget: 0,
                            budgetStart: Timestamp(milliseconds: 0))
        job.subscription = subscription
        return job
    }

    @Test func laterEventsWaitForTheOneOnItsWayAndGoInJournalOrder() {
        let order = SubscriptionOrder()
        #expect(order.admit(job(1, "a")))
        #expect(order.admit(job(2, "b")))  // another subscription is not held back
        #expect(!order.admit(job(5, "a")) && !order.admit(job(3, "a")))
        #expect(order.admit(job(1, "a")))  // the holder itself (a retry, a hand-over)
        #expect(order.heldCount == 2)
        let now = Timestamp(milliseconds: 99)
        #expect(order.release(subscription: "a", at: RecordPosition(segment: 1, offset: 5), gap: nil, now: now) == nil)
        let next = order.release(subscription: "a", at: RecordPosition(segment: 1, offset: 1), gap: nil, now: now)
        #expect(next?.eventId == "e3" && next?.due == now && next?.orderingGap == nil)
        let last = order.release(subscription: "a", at: RecordPosition(segment: 1, offset: 3), gap: "e3", now: now)
        #expect(last?.eventId == "e5" && last?.orderingGap == "e3")
        #expect(order.release(subscription: "a", at: RecordPosition(segment: 1, offset: 5), gap: nil, now: now) == nil)
        // Nothing is kept for a subscription with nothing left to send.
        #expect(order.admit(job(9, "a")) && order.heldCount == 0)
    }

    @Test func eventsWithoutASubscriptionAreNeverHeld() {
        let order = SubscriptionOrder()
        #expect(order.admit(job(1, nil)) && order.admit(job(2, nil)) && order.heldCount == 0)
    }

    @Test func releasingAllGivesEveryHeldEventInJournalOrder() {
        let order = SubscriptionOrder()
        for (offset, subscription) in [(1, "a"), (2, "b"), (7, "a"), (4, "b"), (3, "a")] {
            _ = order.admit(job(offset, subscription))
        }
        #expect(order.releaseAll().map(\.eventId) == ["e3", "e4", "e7"])
        #expect(order.heldCount == 0 && order.admit(job(8, "a")))
    }

    @Test func theSubscriptionAndGapSurviveACheckpoint() throws {
        var parked = job(3, "sub-1")
        parked.orderingGap = "e2"
        let decoded = try #require(ParkedJob(json: parked.json, destination: "d"))
        #expect(decoded == parked)
    }
}

/// Five subscriptions of eight events each, to a concurrency-8 destination whose sink fails
/// the first attempts of every third event.
@Suite(.serialized) struct OrderedDeliveryTests {
    static let subscriptions = 5
    static let events = 40

    static func routes(_ sink: WebhookSink, _ destinations: [(name: String, path: String, order: Bool)], options: String = "") -> String {
        destinations.map { destination in
            """
            destination \(destination.name) webhook \(sink.url(destination.path)) {
                concurrency 8
                backoff 150ms 150ms
                timeout 5s
            \(destination.order ? "    order per-subscription\n" : "")\(options)}
            """
        }.joined(separator: "\n") + "\nroute * * * -> \(destinations.map(\.name).joined(separator: ", "))\n"
    }

    @Test func eachSubscriptionArrivesInOrderWhileTheControlReorders() throws {
        let sink = try WebhookSink()
        let ordered = "/fail-every/3/2/ordered", control = "/fail-every/3/2/control"
        let harness = try ParkingHarness(routes: Self.routes(sink, [("ordered", ordered, true), ("control", control, false)]), whole: 64)
        defer { harness.stop() }
        _ = try harness.accept(Self.events, destinations: ["ordered", "control"]) { "sub-\($0 % Self.subscriptions)" }
        #expect(sink.waitFor(timeout: 30) { _ in
            sink.successes(path: ordered, groups: Self.subscriptions).values.map(\.count).reduce(0, +) == Self.events
                && sink.successes(path: control, groups: Self.subscriptions).values.map(\.count).reduce(0, +) == Self.events
        })
        let inOrder = sink.successes(path: ordered, groups: Self.subscriptions)
        for (subscription, numbers) in inOrder {
            #expect(numbers == Array(stride(from: subscription, to: Self.events, by: Self.subscriptions)), "subscription \(subscription)")
        }
        // Without `order`, a failed event's retry comes after later events of its subscription.
        let reordered = sink.successes(path: control, groups: Self.subscriptions)
        #expect(reordered.values.contains { $0 != $0.sorted() })
        // Other subscriptions proceed: the ordered destination had several requests in flight.
        let times = sink.requests(path: ordered).compactMap { $0["at"]?.doubleValue }
        #expect(times.count >= Self.events)
    }

    @Test func aDeadLetteredEventReleasesTheNextWithTheGap() throws {
        let sink = try WebhookSink()
        let path = "/fail-every/4/99/gap"
        let harness = try ParkingHarness(routes: Self.routes(sink, [("gap", path, true)], options: "    max-attempts 2\n"), whole: 64)
        defer { harness.stop() }
        _ = try harness.accept(8, destinations: ["gap"]) { "sub-\($0 % 2)" }
        #expect(sink.waitFor(timeout: 30) { requests in
            requests.filter { $0["path"]?.stringValue == path && !["event-0", "event-4"].contains($0["headers"]?["webhook-id"]?.stringValue) }.count == 6
        })
        let requests = sink.requests(path: path)
        func gap(_ id: String) -> String? {
            requests.first { $0["headers"]?["webhook-id"]?.stringValue == id }?["headers"]?["storerelay-ordering-gap"]?.stringValue
        }
        #expect(gap("event-2") == "event-0" && gap("event-6") == "event-4")
        #expect(gap("event-1") == nil && gap("event-3") == nil && gap("event-5") == nil && gap("event-7") == nil)
        let sub0 = requests.compactMap { $0["headers"]?["webhook-id"]?.stringValue }.filter { ["event-0", "event-2", "event-4", "event-6"].contains($0) }
        // event-0 twice (max-attempts 2), then event-2, then event-4 twice, then event-6.
        #expect(sub0 == ["event-0", "event-0", "event-2", "event-4", "event-4", "event-6"])
    }

    /// A reload that redefines the destination while events are in flight, retrying and held:
    /// the queue that replaces it shares the holds, so the old queue's unfinished events still
    /// go before the later ones of their subscription.
    @Test func orderHoldsAcrossAReloadThatRedefinesTheDestination() throws {
        let sink = try WebhookSink()
        let before = "/fail-every/2/3/before", after = "/fail-every/3/1/after"
        func routes(_ path: String, _ timeout: String) -> String {
            """
            destination ordered webhook \(sink.url(path)) {
                order per-subscription
                concurrency 8
                backoff 100ms 100ms
                timeout \(timeout)
            }
            route * * * -> ordered
            """
        }
        let harness = try ParkingHarness(routes: routes(before, "5s"), whole: 4)
        defer { harness.stop() }
        _ = try harness.accept(24, destinations: ["ordered"]) { "sub-\($0 % 4)" }
        // Half the events fail three times: some are retrying and the rest held when it reloads.
        #expect(sink.waitFor(timeout: 10) { requests in requests.filter { $0["path"]?.stringValue == before }.count >= 12 })
        try harness.reconfigure(try ParkingHarness.configuration(routes(after, "4s")))
        #expect(sink.waitFor(timeout: 30) { _ in sink.successes(paths: [before, after], groups: 4).values.map(\.count).reduce(0, +) >= 24 })
        for (subscription, numbers) in sink.successes(paths: [before, after], groups: 4) {
            #expect(numbers == Array(stride(from: subscription, to: 24, by: 4)), "subscription \(subscription)")
        }
    }

    @Test func orderHoldsAcrossARestartWithEventsStillHeld() throws {
        let down = "http://127.0.0.1:1/down"
        let first = try ParkingHarness(routes: """
            destination ordered webhook \(down) {
                order per-subscription
                concurrency 8
                backoff 100ms 100ms
            }
            route * * * -> ordered
            """, whole: 4)
        _ = try first.accept(20, destinations: ["ordered"]) { "sub-\($0 % 4)" }
        Thread.sleep(forTimeInterval: 0.5)  // a few failed attempts, while the later events are held
        #expect(first.engine.status.first?.queueDepth ?? 0 >= 16)
        first.stop()

        let sink = try WebhookSink()
        let path = "/fail-every/3/1/restart"
        let second = try ParkingHarness(routes: Self.routes(sink, [("ordered", path, true)]), whole: 4, directory: first.directory)
        defer { second.stop() }
        try second.resume()
        #expect(sink.waitFor(timeout: 30) { _ in
            sink.successes(path: path, groups: 4).values.map(\.count).reduce(0, +) == 20
        })
        for (subscription, numbers) in sink.successes(path: path, groups: 4) {
            #expect(numbers == Array(stride(from: subscription, to: 20, by: 4)), "subscription \(subscription)")
        }
    }
}
