import BenchKit
import CBenchSys
import Dispatch
import Foundation
import StoreRelayCore
import StoreRelayStorage

/// The event log (issue 28, point 1): N summaries written straight into a log (not through
/// HTTP, to keep it fast), spread over 30 days as a month of traffic is, then opened in a
/// fresh process that reports its RSS growth and the time of `q` lookups by each id kind.
/// Run for N and 10·N; the ratios show what grows with the number of events.
struct EventLogBenchmark {
    let work: String
    let counts: [Int]

    static let span: Int64 = 30 * 86_400_000
    /// Longer than the span, so nothing is retired while the benchmark runs.
    static let retention: Duration = .seconds(40 * 86_400)

    struct Probe {
        var rssGrowthKiB: Int
        var openSeconds: Double
        var segments: Int
        var byId: (p50: Double, p99: Double)
        var bySubscription: (p50: Double, p99: Double)
        var byTransaction: (p50: Double, p99: Double)
        var absent: (p50: Double, p99: Double)
        var firstPage: (p50: Double, p99: Double)
        var diskBytes: Int
    }

    func run() throws {
        Report.section("Event log: q lookups and RSS with N events indexed (log opened in a fresh process)")
        var probes: [(Int, Probe)] = []
        for count in counts {
            let directory = work + "/event-log-\(count)"
            if !FileManager.default.fileExists(atPath: directory + "/complete") {
                try? FileManager.default.removeItem(atPath: directory)
                let started = MonotonicClock.nanoseconds()
                try Self.fill(count, in: directory)
                FileManager.default.createFile(atPath: directory + "/complete", contents: Data())
                Report.line("   wrote \(count) summaries in \(String(format: "%.1f", Double(MonotonicClock.nanoseconds() - started) / 1e9)) s")
            }
            let probe = try Self.probeInChild(directory: directory, count: count)
            probes.append((count, probe))
            Report.line("   \(count) events: \(probe.segments) segments, \(Format.mib(kilobytes: probe.diskBytes / 1024)) on disk, "
                + "RSS +\(Format.mib(kilobytes: probe.rssGrowthKiB)), open \(String(format: "%.2f", probe.openSeconds)) s")
            Report.line("      q=notificationUUID p50 \(Self.milli(probe.byId.p50)) p99 \(Self.milli(probe.byId.p99)); "
                + "q=originalTransactionId p50 \(Self.milli(probe.bySubscription.p50)) p99 \(Self.milli(probe.bySubscription.p99)); "
                + "q=transactionId p50 \(Self.milli(probe.byTransaction.p50)) p99 \(Self.milli(probe.byTransaction.p99)); "
                + "absent p99 \(Self.milli(probe.absent.p99)); first page (50, no filter) p99 \(Self.milli(probe.firstPage.p99))")
        }
        if let small = probes.first, let large = probes.last, large.0 > small.0 {
            let ratio = { (a: Double, b: Double) in String(format: "%.2f", b / max(a, 1e-12)) }
            Report.line("   \(large.0) vs \(small.0) events: RSS growth x\(ratio(Double(small.1.rssGrowthKiB), Double(large.1.rssGrowthKiB))), "
                + "lookup p99 by id x\(ratio(small.1.byId.p99, large.1.byId.p99)), "
                + "by originalTransactionId x\(ratio(small.1.bySubscription.p99, large.1.bySubscription.p99)), "
                + "by transactionId x\(ratio(small.1.byTransaction.p99, large.1.byTransaction.p99)), "
                + "absent x\(ratio(small.1.absent.p99, large.1.absent.p99)), first page x\(ratio(small.1.firstPage.p99, large.1.firstPage.p99))")
            Report.check(Double(large.1.rssGrowthKiB) < Double(max(small.1.rssGrowthKiB, 1024)) * 2,
                         "RSS does not grow with the log (\(large.0) events: +\(Format.mib(kilobytes: large.1.rssGrowthKiB)))")
            Report.check(large.1.byId.p99 < small.1.byId.p99 * 2, "a lookup by id costs about the same at \(large.0) events as at \(small.0)")
        }
    }

    static func milli(_ seconds: Double) -> String { String(format: "%.2f ms", seconds * 1e3) }

    /// Event `index`'s summary: ids derived from the index, so the probe knows them; three
    /// events per subscription; received evenly over the 30 days before now.
    static func summary(_ index: Int, count: Int, now: Int64) -> EventSummary {
        let at = now - span + Int64(index) * span / Int64(max(count, 1))
        let hex = String(index, radix: 16)
        let id = "00000000-0000-4000-8000-" + String(repeating: "0", count: max(0, 12 - hex.count)) + hex
        return EventSummary(id: id, receivedAt: Timestamp(milliseconds: at), type: index % 7 == 0 ? "SUBSCRIBED" : "DID_RENEW",
                            subtype: nil, environment: "production", bundleId: "com.acme.app\(index % 4)",
                            originalTransactionId: "20000\(index / 3)", transactionId: "30000\(index)",
                            deliveries: [.init(destination: "billing", state: .delivered), .init(destination: "analytics", state: .delivered)])
    }

    static func options() -> EventLogOptions {
        var options = EventLogOptions()
        options.retention = retention
        return options
    }

    /// Appends `count` summaries a batch at a time, waiting for each to be written so the
    /// queue of pending appends stays small.
    static func fill(_ count: Int, in directory: String) throws {
        let log = try EventLog.open(directory: directory, options: options(), logger: .disabled)
        defer { log.close() }
        let now = Timestamp.now().milliseconds
        let batch = 100_000
        var written = 0
        while written < count {
            for index in written..<min(count, written + batch) {
                let summary = summary(index, count: count, now: now)
                log.append { summary }
            }
            let done = DispatchSemaphore(value: 0)
            log.flush { done.signal() }
            done.wait()
            written = min(count, written + batch)
        }
    }

    static func probeInChild(directory: String, count: Int) throws -> Probe {
        let output = directory + ".probe.json"
        let child = try ChildProcess([CommandLine.arguments[0], "--event-log-probe", directory, "--events", String(count)],
                                     stdout: output, stderr: output + ".err")
        guard child.wait() == 0, let text = readText(output), let json = try? JSONValue.parse(Array(text.utf8)) else {
            throw BenchError("the event-log probe failed: \(readText(output + ".err") ?? "")")
        }
        func number(_ key: String) -> Double { json[key]?.doubleValue ?? 0 }
        func pair(_ key: String) -> (Double, Double) { (number(key + "P50"), number(key + "P99")) }
        return Probe(rssGrowthKiB: Int(number("rssGrowthKiB")), openSeconds: number("openSeconds"), segments: Int(number("segments")),
                     byId: pair("id"), bySubscription: pair("subscription"), byTransaction: pair("transaction"), absent: pair("absent"),
                     firstPage: pair("firstPage"), diskBytes: Int(number("diskBytes")))
    }

    /// The child's side: open, look up, print one JSON object, exit.
    static func probe(directory: String, count: Int) throws -> Never {
        malloc_trim(0)
        let before = ProcessStats.memory(pid: getpid()).rss
        let started = MonotonicClock.nanoseconds()
        let log = try EventLog.open(directory: directory, options: options(), logger: .disabled)
        let openSeconds = Double(MonotonicClock.nanoseconds() - started) / 1e9
        var generator = SystemRandomNumberGenerator()
        func timings(_ queries: [EventLogQuery], expect: (Int) -> Bool) throws -> (Double, Double) {
            var samples: [Double] = []
            for query in queries {
                let start = MonotonicClock.nanoseconds()
                let page = try log.searchNow(query, limit: 50).get()
                samples.append(Double(MonotonicClock.nanoseconds() - start) / 1e9)
                guard expect(page.items.count) else { throw BenchError("\(query.q ?? "list"): \(page.items.count) items") }
            }
            samples.sort()
            return (samples[samples.count / 2], samples[samples.count * 99 / 100])
        }
        let picks = (0..<1_000).map { _ in Int.random(in: 0..<count, using: &generator) }
        let now = Timestamp.now().milliseconds
        let ids = try timings(picks.map { EventLogQuery(q: summary($0, count: count, now: now).id) }) { $0 == 1 }
        let subscriptions = try timings(picks.map { EventLogQuery(q: "20000\($0 / 3)") }) { (1...3).contains($0) }
        let transactions = try timings(picks.map { EventLogQuery(q: "30000\($0)") }) { $0 == 1 }
        let absent = try timings((0..<1_000).map { EventLogQuery(q: "never-seen-\($0)") }) { $0 == 0 }
        let firstPage = try timings((0..<200).map { _ in EventLogQuery() }) { $0 == 50 }
        malloc_trim(0)
        let after = ProcessStats.memory(pid: getpid()).rss
        let segments = log.segmentCount
        log.close()
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        let disk = files.reduce(0) { $0 + (((try? FileManager.default.attributesOfItem(atPath: directory + "/" + $1))?[.size] as? Int) ?? 0) }
        let json: JSONValue = [
            "rssGrowthKiB": .integer(Int64(after - before)), "openSeconds": .number(JSONNumber(openSeconds)),
            "segments": .integer(Int64(segments)), "diskBytes": .integer(Int64(disk)),
            "idP50": .number(JSONNumber(ids.0)), "idP99": .number(JSONNumber(ids.1)),
            "subscriptionP50": .number(JSONNumber(subscriptions.0)), "subscriptionP99": .number(JSONNumber(subscriptions.1)),
            "transactionP50": .number(JSONNumber(transactions.0)), "transactionP99": .number(JSONNumber(transactions.1)),
            "absentP50": .number(JSONNumber(absent.0)), "absentP99": .number(JSONNumber(absent.1)),
            "firstPageP50": .number(JSONNumber(firstPage.0)), "firstPageP99": .number(JSONNumber(firstPage.1)),
        ]
        print(String(decoding: json.serializedBytes(), as: UTF8.self))
        exit(0)
    }
}
