import BenchKit
import CBenchSys
import Dispatch
import Foundation
import StoreRelayCore
import StoreRelayStorage

/// Remembered ids (issue 15, point 3): a journal whose `seen-ids` holds N retired ids is
/// opened in a fresh process, which reports its RSS growth, the open time and the time of
/// `contains` for ids it never saw (the acceptance path's common case) and for ids it did
/// (Apple's retries). Run for N and 10·N in one go; the ratios show what grows with N.
struct DedupeBenchmark {
    let work: String
    let counts: [Int]

    /// What the probe process measured.
    struct Probe {
        var rssGrowthKiB: Int
        var openSeconds: Double
        var absent: (p50: Double, p99: Double)
        var present: (p50: Double, p99: Double)
        var fileBytes: Int
        /// The same ids in the dictionary the journal used before this index.
        var baselineKiB: Int
    }

    func run() throws {
        Report.section("Dedupe memory: ids remembered in seen-ids (journal open in a fresh process)")
        var probes: [(Int, Probe)] = []
        for count in counts {
            let directory = work + "/dedupe-\(count)"
            if !FileManager.default.fileExists(atPath: directory + "/seen-ids") {
                try? FileManager.default.removeItem(atPath: directory)
                let started = MonotonicClock.nanoseconds()
                try Self.remember(count, in: directory)
                Report.line("   built \(count) remembered ids in \(String(format: "%.1f", Double(MonotonicClock.nanoseconds() - started) / 1e9)) s")
            }
            let probe = try Self.probeInChild(directory: directory, count: count)
            probes.append((count, probe))
            Report.line("   \(count) ids: seen-ids \(Format.mib(kilobytes: probe.fileBytes / 1024)), RSS +\(Format.mib(kilobytes: probe.rssGrowthKiB)) "
                + "(baseline, the dictionary used before: +\(Format.mib(kilobytes: probe.baselineKiB))), "
                + "open \(String(format: "%.2f", probe.openSeconds)) s, lookup new id p50 \(Self.micro(probe.absent.p50)) p99 \(Self.micro(probe.absent.p99)), "
                + "seen id p50 \(Self.micro(probe.present.p50)) p99 \(Self.micro(probe.present.p99))")
        }
        if let small = probes.first, let large = probes.last, large.0 > small.0 {
            let ratio = { (a: Double, b: Double) in String(format: "%.2f", b / max(a, 1e-12)) }
            Report.line("   \(large.0) vs \(small.0) ids: RSS growth x\(ratio(Double(small.1.rssGrowthKiB), Double(large.1.rssGrowthKiB))), "
                + "new-id lookup p99 x\(ratio(small.1.absent.p99, large.1.absent.p99)), seen-id lookup p99 x\(ratio(small.1.present.p99, large.1.present.p99))")
            let largeMiB = Double(large.1.rssGrowthKiB) / 1024
            Report.check(largeMiB < 64, "\(large.0) remembered ids cost < 64 MiB of RSS (\(String(format: "%.1f", largeMiB)) MiB)")
            Report.check(large.1.present.p99 < 0.001, "a lookup stays well under the acknowledgement budget (seen-id p99 < 1 ms)")
        }
    }

    static func micro(_ seconds: Double) -> String { String(format: "%.1f µs", seconds * 1e6) }

    /// Appends `count` ids through the journal and retires them, a million at a time, so
    /// `seen-ids` is written as the gateway writes it.
    static func remember(_ count: Int, in directory: String) throws {
        var options = JournalOptions()
        options.segmentSizeLimit = 8 << 20
        let journal = try Journal.open(directory: directory, options: options, logger: .disabled)
        defer { journal.close() }
        let round = 1_000_000
        var written = 0
        while written < count {
            let batch = min(round, count - written)
            let group = DispatchGroup()
            let failures = Locked(0)
            for index in written..<(written + batch) {
                group.enter()
                journal.append(id: "dedupe-bench-\(index)", payload: [1]) { outcome in
                    if case .failed = outcome { failures.withLock { $0 += 1 } }
                    group.leave()
                }
            }
            group.wait()
            guard failures.current == 0 else { throw BenchError("\(failures.current) appends failed") }
            let retired = DispatchSemaphore(value: 0)
            journal.retireSegments(upTo: .max) { _ in retired.signal() }
            retired.wait()
            written += batch
        }
    }

    /// Runs this binary again with `--dedupe-probe`, so the RSS measured is the journal's.
    static func probeInChild(directory: String, count: Int) throws -> Probe {
        let output = directory + ".probe.json"
        let child = try ChildProcess([CommandLine.arguments[0], "--dedupe-probe", directory, "--ids", String(count)],
                                     stdout: output, stderr: output + ".err")
        guard child.wait() == 0, let text = readText(output),
              let json = try? JSONValue.parse(Array(text.utf8)) else {
            throw BenchError("the dedupe probe failed: \(readText(output + ".err") ?? "")")
        }
        func number(_ key: String) -> Double { json[key]?.doubleValue ?? 0 }
        return Probe(rssGrowthKiB: Int(number("rssGrowthKiB")), openSeconds: number("openSeconds"),
                     absent: (number("absentP50"), number("absentP99")), present: (number("presentP50"), number("presentP99")),
                     fileBytes: Int(number("fileBytes")), baselineKiB: Int(number("baselineKiB")))
    }

    /// The child's side: open, measure, print one JSON object, exit.
    static func probe(directory: String, count: Int) throws -> Never {
        let before = ProcessStats.memory(pid: getpid()).rss
        let started = MonotonicClock.nanoseconds()
        var options = JournalOptions()
        options.segmentSizeLimit = 8 << 20
        let journal = try Journal.open(directory: directory, options: options, logger: .disabled)
        let openSeconds = Double(MonotonicClock.nanoseconds() - started) / 1e9
        // As the gateway does once deliveries have resumed: the records recovery read back
        // are dropped, and freed memory goes back to the system (`MemoryTrimmer`).
        journal.releaseRecoveredRecords()
        malloc_trim(0)
        let after = ProcessStats.memory(pid: getpid()).rss
        func timings(_ ids: [String]) -> (Double, Double) {
            var samples: [Double] = []
            samples.reserveCapacity(ids.count)
            for id in ids {
                let start = MonotonicClock.nanoseconds()
                _ = journal.contains(id: id)
                samples.append(Double(MonotonicClock.nanoseconds() - start) / 1e9)
            }
            samples.sort()
            return (samples[samples.count / 2], samples[samples.count * 99 / 100])
        }
        var generator = SystemRandomNumberGenerator()
        let absent = timings((0..<100_000).map { _ in "never-seen-\(UInt64.random(in: 0...UInt64.max, using: &generator))" })
        let present = timings((0..<20_000).map { _ in "dedupe-bench-\(Int.random(in: 0..<count, using: &generator))" })
        let missing = (0..<1_000).filter { !journal.contains(id: "dedupe-bench-\($0 * (count / 1_000))") }.count
        guard missing == 0 else { throw BenchError("\(missing) remembered ids were not found") }
        let size = ((try? FileManager.default.attributesOfItem(atPath: directory + "/seen-ids"))?[.size] as? Int) ?? 0
        journal.close()
        // The baseline, in the same process: the dictionary of 16-byte digests and first-seen
        // times the journal kept before (`[EventIDDigest: Int64]`), for the same count.
        struct Digest: Hashable { let high: UInt64, low: UInt64 }
        malloc_trim(0)
        let beforeBaseline = ProcessStats.memory(pid: getpid()).rss
        var dictionary: [Digest: Int64] = [:]
        for index in 0..<count { dictionary[Digest(high: UInt64(index) &* 0x9E37_79B9_7F4A_7C15, low: UInt64(index))] = Int64(index) }
        let baseline = ProcessStats.memory(pid: getpid()).rss - beforeBaseline
        precondition(dictionary.count == count)
        let json: JSONValue = [
            "rssGrowthKiB": .integer(Int64(after - before)), "openSeconds": .number(JSONNumber(openSeconds)),
            "absentP50": .number(JSONNumber(absent.0)), "absentP99": .number(JSONNumber(absent.1)),
            "presentP50": .number(JSONNumber(present.0)), "presentP99": .number(JSONNumber(present.1)), "fileBytes": .integer(Int64(size)),
            "baselineKiB": .integer(Int64(baseline)),
        ]
        print(String(decoding: json.serializedBytes(), as: UTF8.self))
        exit(0)
    }
}
