import Dispatch
import Foundation
import StoreRelayCluster
import StoreRelayCore
import StoreRelayDelivery
import StoreRelayNet
import StoreRelayStorage
import StoreRelayTestSupport
import StoreRelayVerification
import Testing

/// Cluster mode's event log on a real `redis-server` (issue 28, point 1): written as the
/// gateway writes it, searched by each id kind, filtered and paged, states changed, and its
/// memory per event measured.
@Suite(.serialized, .enabled(if: RedisServerProcess.isAvailable, "redis-server is not installed (apt-get install redis-server)"))
struct ClusterEventLogTests {
    let keys = ClusterKeys()

    /// Event `n`: subscription `sub-<n/3>`, transaction `tx-<n>`, received `n` seconds after
    /// a fixed instant.
    func event(_ n: Int, destinations: [String] = ["billing", "crm"]) -> StoredNotification {
        let payload = try! JSONValue.parse(#"{"notificationType":"DID_RENEW","notificationUUID":"\#(id(n))","version":"2.0","signedDate":1800000000000,"data":{"bundleId":"com.acme.journal","environment":"Sandbox","appAppleId":1}}"#)
        let transaction = JSONValue.object(JSONObject([("originalTransactionId", .string("sub-\(n / 3)")), ("transactionId", .string("tx-\(n)"))]))
        let receivedAt = Timestamp(milliseconds: 1_800_000_000_000 + Int64(n) * 1000)
        let event = try! NormalizedEvent(content: NotificationContent(payload: payload.objectValue!, transaction: transaction, environment: .sandbox),
                                         receivedAt: receivedAt)
        return StoredNotification(event: event, disposition: .accept, destinations: destinations, body: [], receivedAt: receivedAt)
    }

    func id(_ n: Int) -> String { String(format: "00000000-0000-4000-8000-%012d", n) }

    func page(_ log: ClusterEventLog, _ query: EventLogQuery = EventLogQuery(), limit: Int = 50,
              after cursor: EventLogCursor? = nil) async throws -> EventLogPage {
        try await log.search(query, limit: limit, after: cursor).get()
    }

    func all(_ log: ClusterEventLog, _ query: EventLogQuery = EventLogQuery(), limit: Int) async throws -> [String] {
        var ids: [String] = []
        var cursor: EventLogCursor?
        repeat {
            let page = try await page(log, query, limit: limit, after: cursor)
            ids += page.items.map(\.id)
            cursor = page.nextCursor
        } while cursor != nil
        return ids
    }

    /// Waits until the fire-and-forget writes before it are on the server (one connection,
    /// answered in order).
    func settled(_ client: RedisClient) {
        _ = reply(client, "PING")
    }

    @Test func searchFilterPageAndStates() async throws {
        let server = try RedisServerProcess()
        let client = try clusterClient(server)
        defer { client.shutdown() }
        // The log's writes are not retried: one sent before the connection is up is lost.
        #expect(pollUntil(timeout: 5) { client.isConnected })
        let clock = ManualClock(Timestamp(milliseconds: 1_800_000_100_000))
        let log = ClusterEventLog(client: client, retention: .seconds(86_400), clock: clock, logger: .disabled, scanBudget: 5)
        for n in 0..<12 { log.append(event(n)) }
        var unrouted = event(12, destinations: [])
        unrouted.disposition = .quarantine(reason: "app x is not declared")
        log.append(unrouted)
        log.setState(.delivered, eventId: id(4), destination: "billing")
        log.setState(.deadLettered, eventId: id(4), destination: "crm")
        log.setState(.delivered, eventId: id(99), destination: "billing")  // never logged: nothing created
        settled(client)
        #expect(reply(client, "EXISTS", keys.logEvent(id(99)))?.integer == 0)

        #expect(try await page(log, EventLogQuery(q: id(4))).items.map(\.id) == [id(4)])
        #expect(try await page(log, EventLogQuery(q: "sub-1")).items.map(\.id) == [id(5), id(4), id(3)])
        #expect(try await page(log, EventLogQuery(q: "tx-4")).items.map(\.id) == [id(4)])
        #expect(try await page(log, EventLogQuery(q: "tx-1", app: "com.other")).items.isEmpty)
        let item = try #require(try await page(log, EventLogQuery(q: id(4))).items.first)
        #expect(item.deliveries == [.init(destination: "billing", state: .delivered), .init(destination: "crm", state: .deadLettered)])
        #expect(item.originalTransactionId == "sub-1" && item.transactionId == "tx-4")
        #expect(item.environment == "sandbox" && item.bundleId == "com.acme.journal" && item.type == "DID_RENEW")
        #expect(try await page(log, EventLogQuery(q: "sub-9")).items.isEmpty)
        // Every event, newest first, across pages (and a scan budget of 5 records a request).
        let everything = (0..<13).reversed().map(id)
        for limit in [1, 2, 5, 13, 50] {
            let listed = try await all(log, limit: limit)
            #expect(listed == everything, "limit \(limit): \(listed.map { $0.suffix(2) })")
        }
        #expect(try await all(log, EventLogQuery(q: "sub-2"), limit: 1) == [id(8), id(7), id(6)])
        #expect(try await all(log, EventLogQuery(state: .deadLettered), limit: 10) == [id(4)])
        #expect(try await all(log, EventLogQuery(state: .pending, destination: "crm"), limit: 10).count == 11)
        #expect(try await all(log, EventLogQuery(since: Timestamp(milliseconds: 1_800_000_010_000)), limit: 2) == [id(12), id(11), id(10)])
        #expect(try await page(log, EventLogQuery(q: id(12))).items.first?.deliveries.isEmpty == true)

        // Retention: what is older than it is gone for readers, and trimmed at the next write.
        clock.advance(by: .seconds(86_400 - 95))  // now 1_800_086_405_000: events before 5 s past the start expire
        #expect(try await all(log, limit: 50) == (5..<13).reversed().map(id))
        log.append(event(13))
        settled(client)
        #expect(reply(client, "ZCARD", keys.logTime)?.integer == 9)
    }

    /// Same-millisecond events page without loss or repeat (the cursor counts within a time).
    @Test func eventsAtTheSameMillisecondPageExactlyOnce() async throws {
        let server = try RedisServerProcess()
        let client = try clusterClient(server)
        defer { client.shutdown() }
        // The log's writes are not retried: one sent before the connection is up is lost.
        #expect(pollUntil(timeout: 5) { client.isConnected })
        let log = ClusterEventLog(client: client, retention: .seconds(86_400), clock: ManualClock(Timestamp(milliseconds: 1_800_000_100_000)),
                                  logger: .disabled)
        for n in 0..<9 {
            var stored = event(n)
            stored.receivedAt = Timestamp(milliseconds: 1_800_000_000_000 + Int64(n / 4))
            log.append(stored)
        }
        settled(client)
        for limit in 1...4 {
            let ids = try await all(log, limit: limit)
            #expect(ids.count == 9 && Set(ids).count == 9, "limit \(limit): \(ids)")
            #expect(try await all(log, EventLogQuery(q: "sub-1"), limit: limit).count == 3)
        }
        // Only events a filter drops between two matches at one time: still each once.
        #expect(try await all(log, EventLogQuery(state: .pending, destination: "crm"), limit: 1).count == 9)
    }

    /// What README states: the server's memory per logged event.
    @Test func memoryPerEvent() async throws {
        let server = try RedisServerProcess()
        let client = try clusterClient(server)
        defer { client.shutdown() }
        // The log's writes are not retried: one sent before the connection is up is lost.
        #expect(pollUntil(timeout: 5) { client.isConnected })
        let log = ClusterEventLog(client: client, retention: .seconds(30 * 86_400), clock: WallClock(), logger: .disabled)
        func usedMemory() -> Int {
            let info = reply(client, "INFO", "memory")?.string ?? ""
            return info.split(separator: "\r\n").first { $0.hasPrefix("used_memory:") }.flatMap { Int($0.dropFirst(12)) } ?? 0
        }
        let count = 20_000
        let before = usedMemory()
        let now = Timestamp.now().milliseconds
        for n in 0..<count {
            var stored = event(n)
            stored.receivedAt = Timestamp(milliseconds: now - Int64(count - n) * 1000)
            log.append(stored)
            if n % 1000 == 999 { settled(client) }
        }
        settled(client)
        let perEvent = Double(usedMemory() - before) / Double(count)
        let hash = reply(client, "MEMORY", "USAGE", keys.logEvent(id(7)))?.integer ?? 0
        let subscription = reply(client, "MEMORY", "USAGE", keys.logKey("sub-2"))?.integer ?? 0
        let transaction = reply(client, "MEMORY", "USAGE", keys.logKey("tx-7"))?.integer ?? 0
        print("event log on the server: \(Int(perEvent)) bytes per event (used_memory over \(count) events, three a "
            + "subscription); one event's hash \(hash) bytes, one subscription's set \(subscription) bytes, one transaction's \(transaction)")
        #expect(reply(client, "ZCARD", keys.logTime)?.integer == Int64(count))
        #expect(perEvent > 100 && perEvent < 3_000)
    }
}
