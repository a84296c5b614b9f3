import Foundation
import StoreRelayStorage
import StoreRelayCore
import StoreRelayTestSupport

/// A fresh directory under the system temp directory, removed by `remove()`.
struct TemporaryDirectory {
    let path: String

    init() throws { path = try TestPaths.makeTemporaryDirectory("filequeue-tests").path }

    /// The queue directory inside it, as the gateway lays it out (`DATA/queues/NAME`).
    var queue: String { path + "/queues/ledger" }

    func remove() { try? FileManager.default.removeItem(atPath: path) }
}

func testOptions(rotateSize: Int = 64 * 1024 * 1024, rotateAge: Duration = .seconds(3600),
                 compression: FileQueueOptions.Compression = .none, clock: (any TimeSource)? = nil) -> FileQueueOptions {
    var options = FileQueueOptions(rotateSize: rotateSize, rotateAge: rotateAge, compression: compression)
    if let clock { options.clock = clock }
    return options
}

func openQueue(_ directory: String, _ options: FileQueueOptions = FileQueueOptions(),
               sink: MemorySink = MemorySink()) throws(StorageError) -> FileQueue {
    try FileQueue.open(directory: directory, options: options, logger: Logger(label: "test", level: .debug, sink: sink))
}

extension FileQueue {
    func append(_ text: String) async throws(StorageError) { try await append(line: Array(text.utf8)) }

    /// The outcome of one append, for tests that expect a failure.
    func outcome(_ text: String) async -> Result<Void, StorageError> {
        await withCheckedContinuation { continuation in
            append(line: Array(text.utf8)) { continuation.resume(returning: $0) }
        }
    }
}

/// The segment file name for `sequence` with `suffix` (`.jsonl`, `.jsonl.open`, ...).
func segment(_ directory: String, _ sequence: UInt64, _ suffix: String) -> String {
    let digits = String(sequence)
    return directory + "/" + String(repeating: "0", count: 20 - digits.count) + digits + suffix
}

/// File names in `directory`, sorted, hidden files (`.sequence`) left out.
func names(_ directory: String) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { !$0.hasPrefix(".") }.sorted()
}

func fileExists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }

func readText(_ path: String) -> String {
    String(decoding: FileManager.default.contents(atPath: path) ?? Data(), as: UTF8.self)
}

func writeText(_ path: String, _ text: String) throws {
    try Data(text.utf8).write(to: URL(fileURLWithPath: path))
}

/// Decompresses with the real `gzip` program, as a consumer would.
func gunzip(_ path: String) throws -> CommandResult {
    try CommandRunner.run("gzip", ["-d", "-c", path])
}

/// The lines of a JSONL text; checks that it ends with a newline (whole lines only).
func wholeLines(_ text: String) -> [String]? {
    guard text.isEmpty || text.hasSuffix("\n") else { return nil }
    return text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
}

/// Polls `condition` until it holds or `seconds` pass; never a fixed sleep.
func eventually(within seconds: Double = 10, _ condition: () -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return condition()
}
