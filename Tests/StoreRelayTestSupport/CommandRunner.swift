import Foundation
import StoreRelayCore

/// The result of running a program to completion.
public struct CommandResult: Sendable {
    public var status: Int32
    /// Standard output as bytes, for binary output such as a DER signature.
    public var stdoutBytes: [UInt8]
    public var stderr: String

    /// Standard output as UTF-8 text.
    public var stdout: String { String(decoding: stdoutBytes, as: UTF8.self) }
}

/// A program that exited non-zero when the caller asked `CommandRunner.run` to `check`, or a
/// tool whose output could not be used.
public struct CommandFailure: Error, CustomStringConvertible {
    public let command: [String]
    public let status: Int32
    public let stderr: String
    public var description: String { "\(command.joined(separator: " ")) exited \(status): \(stderr)" }
}

/// Runs programs as real child processes, for tests that drive `storerelay`, `openssl`,
/// `curl` or `python3` as a user would.
public enum CommandRunner {
    /// Runs `executable` (a path, or a name looked up in PATH) with `arguments` and waits for
    /// it, feeding `stdin` when given. Throws `CommandFailure` on a non-zero exit when `check`.
    @discardableResult
    public static func run(
        _ executable: String,
        _ arguments: [String],
        stdin: [UInt8]? = nil,
        environment: [String: String]? = nil,
        directory: URL? = nil,
        check: Bool = false
    ) throws -> CommandResult {
        let process = ChildProcess()
        if executable.contains("/") {
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
        } else {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = [executable] + arguments
        }
        if let environment { process.environment = environment }
        if let directory { process.currentDirectoryURL = directory }
        let outPipe = Pipe(), errPipe = Pipe(), inPipe = Pipe()
        process.standardOutput = outPipe
        process.standardError = errPipe
        process.standardInput = inPipe
        try process.run()
        // Read both pipes concurrently so a chatty child never blocks on a full pipe.
        let out = Locked(Data()), err = Locked(Data())
        let group = DispatchGroup()
        for (pipe, box) in [(outPipe, out), (errPipe, err)] {
            group.enter()
            DispatchQueue.global().async {
                let data = pipe.fileHandleForReading.readDataToEndOfFile()
                box.withLock { $0 = data }
                group.leave()
            }
        }
        if let stdin { try? inPipe.fileHandleForWriting.write(contentsOf: Data(stdin)) }
        try? inPipe.fileHandleForWriting.close()
        process.waitUntilExit()
        group.wait()
        let result = CommandResult(
            status: process.terminationStatus,
            stdoutBytes: Array(out.current),
            stderr: String(decoding: err.current, as: UTF8.self)
        )
        if check && result.status != 0 {
            throw CommandFailure(command: [executable] + arguments, status: result.status, stderr: result.stderr)
        }
        return result
    }

    /// Runs the built `storerelay` binary.
    @discardableResult
    public static func storerelay(
        _ arguments: [String],
        stdin: [UInt8]? = nil,
        environment: [String: String]? = nil,
        directory: URL? = nil
    ) throws -> CommandResult {
        try run(TestPaths.binary.path, arguments, stdin: stdin, environment: environment, directory: directory)
    }

    /// True when `program` is on the PATH.
    public static func isAvailable(_ program: String) -> Bool {
        (try? run("/bin/sh", ["-c", "command -v \(program)"]).status) == 0
    }
}
