import Dispatch
@testable import StoreRelayCluster
import StoreRelayCore
import StoreRelayDelivery
import StoreRelayTestSupport
import Testing

/// The dead-letter index on a real `redis-server` is read a scan at a time: listings and an
/// event's letters come out whole and in order however many batches the index takes.
@Suite(.serialized, .enabled(if: RedisServerProcess.isAvailable, "redis-server is not installed (apt-get install redis-server)"))
struct ClusterDeadLetterScanTests {
    @Test func listingsPageThroughAnIndexReadInManyScans() async throws {
        let server = try RedisServerProcess()
        let redis = try clusterClient(server)
        defer { redis.shutdown() }
        #expect(pollUntil(timeout: 5, interval: 0.01) { redis.isConnected })
        let acknowledgement = ClusterAcknowledgement(client: redis, dedupeWindow: .seconds(86_400))
        let count = 150
        for n in 0..<count {
            // Unrouted: acknowledged with a dead letter and no delivery.
            let done = DispatchSemaphore(value: 0)
            acknowledgement.acknowledge(notification("evt-\(n)", destinations: [])) { _ in done.signal() }
            done.wait()
        }
        // Seven entries per scan step: the index takes more than twenty replies.
        let letters = ClusterDeadLetters(client: redis, indexScanCount: 7)
        var listed: [DeadLetter] = []
        var cursor: String?
        repeat {
            let page = await letters.list(DeadLetterQuery(), limit: 25, cursor: cursor)
            #expect(page.items.count <= 25)
            listed += page.items
            cursor = page.nextCursor
        } while cursor != nil
        #expect(listed.count == count && Set(listed.map(\.eventId)).count == count)
        let order = listed.map { ($0.createdAt.milliseconds, $0.id) }
        #expect(zip(order, order.dropFirst()).allSatisfy { $0 > $1 }, "newest first, as the file store lists")
        #expect(await letters.letters(forEvent: "evt-42").map(\.eventId) == ["evt-42"])
    }
}
