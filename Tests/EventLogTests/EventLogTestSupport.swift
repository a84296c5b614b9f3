import Foundation
@testable import StoreRelayStorage
import StoreRelayTestSupport
import StoreRelayCore

/// A fresh directory under the system temp directory, removed by `remove()`.
struct ScratchDirectory {
    let path: String

    init() {
        var template = Array((NSTemporaryDirectory() + "/event-log-tests-XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        path = String(cString: made!)
    }

    var log: String { path + "/event-log" }

    func files(_ suffix: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: log)) ?? []).filter { $0.hasSuffix(suffix) }.sorted()
    }

    func remove() { try? FileManager.default.removeItem(atPath: path) }
}

/// Summaries with predictable ids: event `n` of subscription `n / 3`, transaction `n`.
enum Summaries {
    static let start = Timestamp(milliseconds: 1_800_000_000_000)

    static func id(_ n: Int) -> String { String(format: "00000000-0000-4000-8000-%012d", n) }

    static func make(_ n: Int, at: Timestamp? = nil, type: String = "DID_RENEW", app: String = "com.acme.app",
                     environment: String = "production", destinations: [String] = ["billing", "analytics"]) -> EventSummary {
        EventSummary(id: id(n), receivedAt: at ?? Timestamp(milliseconds: start.milliseconds + Int64(n) * 1000), type: type,
                     subtype: n % 2 == 0 ? "BILLING_RECOVERY" : nil, environment: environment, bundleId: app,
                     originalTransactionId: "otx-\(n / 3)", transactionId: "tx-\(n)",
                     deliveries: destinations.map { .init(destination: $0, state: .pending) })
    }
}

extension EventLog {
    static func scratch(_ directory: ScratchDirectory, clock: ManualClock, configure: (inout EventLogOptions) -> Void = { _ in })
        throws -> EventLog {
        var options = EventLogOptions()
        options.clock = clock
        configure(&options)
        return try EventLog.open(directory: directory.log, options: options, logger: Logger(label: "test", level: .critical))
    }

    func add(_ summaries: [EventSummary]) {
        for summary in summaries { append { summary } }
    }

    func flushed() async {
        await withCheckedContinuation { continuation in flush { continuation.resume() } }
    }

    func page(_ query: EventLogQuery = EventLogQuery(), limit: Int = 50, after cursor: EventLogCursor? = nil) async throws -> EventLogPage {
        try await search(query, limit: limit, after: cursor).get()
    }

    /// Every page of `query`, concatenated.
    func all(_ query: EventLogQuery = EventLogQuery(), limit: Int) async throws -> [EventSummary] {
        var items: [EventSummary] = []
        var cursor: EventLogCursor?
        repeat {
            let page = try await page(query, limit: limit, after: cursor)
            items += page.items
            cursor = page.nextCursor
        } while cursor != nil
        return items
    }
}
