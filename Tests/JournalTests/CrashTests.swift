import Dispatch
import Foundation
import Testing
import StoreRelayStorage
import StoreRelayCore
import StoreRelayTestSupport

/// `kill -9` a real child process that appends as fast as it can, then check that every
/// append it reported stored is in the journal. The child is this test binary, re-run with
/// a filter that selects `crashChildAppendsUntilKilled` and an environment variable that
/// gives it the directory.
@Suite struct CrashTests {
    static let directoryVariable = "STORERELAY_JOURNAL_CRASH_DIR"

    @Test func killNineLosesNoAcknowledgedAppend() async throws {
        let binary = CommandLine.arguments[0]
        try #require(binary.hasSuffix(".xctest"), "the test binary is not re-runnable as a child (\(binary))")
        let dir = TemporaryDirectory()
        defer { dir.remove() }

        let child = ChildProcess()
        child.executableURL = URL(fileURLWithPath: binary)
        child.arguments = ["--testing-library", "swift-testing", "--filter", "crashChildAppendsUntilKilled"]
        var environment = ProcessInfo.processInfo.environment
        environment[Self.directoryVariable] = dir.journal
        child.environment = environment
        let output = Pipe()
        child.standardOutput = output
        child.standardError = FileHandle.nullDevice
        try child.run()

        let received = Locked<[UInt8]>([])
        let reader = DispatchQueue(label: "crash-child-output")
        let drained = DispatchSemaphore(value: 0)
        reader.async {
            while true {
                let data = output.fileHandleForReading.availableData
                if data.isEmpty { break }
                received.withLock { $0.append(contentsOf: data) }
            }
            drained.signal()
        }
        func acknowledged() -> [String] {
            String(decoding: received.current, as: UTF8.self).split(separator: "\n")
                .filter { $0.hasPrefix("ACK ") && $0.hasSuffix(" END") }
                .map { String($0.dropFirst(4).dropLast(4)) }
        }
        let deadline = MonotonicClock.nanoseconds() + 120_000_000_000
        while acknowledged().count < 500 && child.isRunning && MonotonicClock.nanoseconds() < deadline {
            try await Task.sleep(nanoseconds: 5_000_000)
        }
        child.killAndWait()
        drained.wait()
        let acked = acknowledged()
        try #require(acked.count >= 500, "the child acknowledged only \(acked.count) appends")

        let journal = try open(dir.journal)
        defer { journal.close() }
        let stored = Dictionary(journal.recoveredRecords.map { ($0.id, $0.payload) }, uniquingKeysWith: { first, _ in first })
        for id in acked {
            #expect(stored[id] == Array("payload of \(id)".utf8), "acknowledged \(id) is missing")
        }
        #expect(journal.recoveryIssues.allSatisfy { $0.kind == .tornTail })
        #expect(await journal.append(id: "after-crash", "x").position != nil)
    }

    /// The child half: does nothing unless started by `killNineLosesNoAcknowledgedAppend`.
    @Test func crashChildAppendsUntilKilled() throws {
        guard let directory = ProcessInfo.processInfo.environment[Self.directoryVariable] else { return }
        var options = JournalOptions()
        options.segmentSizeLimit = 64 * 1024
        let journal = try Journal.open(directory: directory, options: options, logger: .disabled)
        @Sendable func next(_ producer: Int, _ n: Int) {
            let id = "crash-\(producer)-\(n)"
            journal.append(id: id, payload: Array("payload of \(id)".utf8)) { outcome in
                if case .stored = outcome {
                    let line = Array("ACK \(id) END\n".utf8)
                    line.withUnsafeBytes { _ = write(1, $0.baseAddress, $0.count) }
                }
                next(producer, n + 1)
            }
        }
        for producer in 0..<8 { next(producer, 0) }
        DispatchSemaphore(value: 0).wait()
    }
}
