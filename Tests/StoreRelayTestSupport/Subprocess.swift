import Foundation

/// Runs a child process to completion, for tests that drive real tools (`openssl`, the
/// `storerelay` binary). Output goes to temporary files rather than pipes, so a chatty child
/// can never block on a full pipe while we wait for it.
public enum Subprocess {
    public struct Failure: Error, CustomStringConvertible {
        public let command: [String]
        public let status: Int32
        public let standardError: String
        public var description: String { "\(command.joined(separator: " ")) exited \(status): \(standardError)" }
    }

    public struct Output: Sendable {
        public let status: Int32
        public let standardOutput: [UInt8]
        public let standardError: String
    }

    /// Runs `executable` (a path, or a name looked up in PATH) with `arguments`, feeding
    /// `input` on stdin, in `directory`. Throws `Failure` on a non-zero exit when `check`.
    @discardableResult
    public static func run(
        _ executable: String, _ arguments: [String], input: [UInt8] = [],
        in directory: String? = nil, check: Bool = true
    ) throws -> Output {
        let scratch = FileManager.default.temporaryDirectory
            .appendingPathComponent("storerelay-subprocess-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let inURL = scratch.appendingPathComponent("stdin")
        let outURL = scratch.appendingPathComponent("stdout")
        let errURL = scratch.appendingPathComponent("stderr")
        try Data(input).write(to: inURL)
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)

        let process = Process()
        if executable.contains("/") {
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
        } else {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = [executable] + arguments
        }
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        let stdin = try FileHandle(forReadingFrom: inURL)
        let stdout = try FileHandle(forWritingTo: outURL)
        let stderr = try FileHandle(forWritingTo: errURL)
        defer { try? stdin.close(); try? stdout.close(); try? stderr.close() }
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        process.waitUntilExit()

        let output = Output(
            status: process.terminationStatus,
            standardOutput: Array(try Data(contentsOf: outURL)),
            standardError: String(decoding: try Data(contentsOf: errURL), as: UTF8.self)
        )
        if check && output.status != 0 {
            throw Failure(command: [executable] + arguments, status: output.status, standardError: output.standardError)
        }
        return output
    }
}
