import Foundation
import StoreRelayStorage
import StoreRelayCore

/// A fresh directory under the system temp directory, removed by `remove()`.
struct TemporaryDirectory {
    let path: String

    init() {
        var template = Array((NSTemporaryDirectory() + "/journal-tests-XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        path = String(cString: made!)
    }

    /// The journal directory inside it, as the gateway lays it out (`DATA/journal`).
    var journal: String { path + "/journal" }

    func remove() { try? FileManager.default.removeItem(atPath: path) }
}

extension Journal {
    func append(id: String, payload: [UInt8]) async -> AppendOutcome {
        await withCheckedContinuation { continuation in
            append(id: id, payload: payload) { continuation.resume(returning: $0) }
        }
    }

    func append(id: String, _ text: String) async -> AppendOutcome {
        await append(id: id, payload: Array(text.utf8))
    }

    func retire(upTo sequence: UInt64) async -> Result<[UInt64], StorageError> {
        await withCheckedContinuation { continuation in
            retireSegments(upTo: sequence) { continuation.resume(returning: $0) }
        }
    }

    func flushed() async {
        await withCheckedContinuation { continuation in flush { continuation.resume() } }
    }
}

extension AppendOutcome {
    var position: RecordPosition? {
        if case .stored(let position) = self { return position }
        return nil
    }
    var isDuplicate: Bool {
        if case .duplicate = self { return true }
        return false
    }
    var error: StorageError? {
        if case .failed(let error) = self { return error }
        return nil
    }
}

func segmentPath(_ directory: String, _ sequence: UInt64) -> String {
    let digits = String(sequence)
    return directory + "/" + String(repeating: "0", count: 20 - digits.count) + digits + ".log"
}

func fileSize(_ path: String) -> Int {
    ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? -1
}

func fileExists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }

func readBytes(_ path: String) -> [UInt8] { [UInt8](FileManager.default.contents(atPath: path) ?? Data()) }

func writeBytes(_ path: String, _ bytes: [UInt8]) throws {
    try Data(bytes).write(to: URL(fileURLWithPath: path))
}

func testOptions(segmentSizeLimit: Int? = nil, clock: (any TimeSource)? = nil, dedupeRetention: Duration? = nil) -> JournalOptions {
    var options = JournalOptions()
    if let segmentSizeLimit { options.segmentSizeLimit = segmentSizeLimit }
    if let clock { options.clock = clock }
    if let dedupeRetention { options.dedupeRetention = dedupeRetention }
    return options
}

func open(_ directory: String, _ options: JournalOptions = JournalOptions(), sink: MemorySink = MemorySink()) throws -> Journal {
    try Journal.open(directory: directory, options: options, logger: Logger(label: "test", level: .debug, sink: sink))
}
