import Foundation
import StoreRelayCore

/// A real `storerelay serve` child process on loopback, for end-to-end tests.
///
/// The gateway logs one JSON object per line on stderr; the process is ready when it logs
/// `listening` for its public listener, whose address carries the port the kernel chose
/// (configs in tests say `listen 127.0.0.1:0`).
public final class GatewayProcess: @unchecked Sendable {
    // Invariant: `process` is set once in init; mutable state lives in the Locked boxes.
    public let directory: URL
    public let configPath: URL
    private let process: ChildProcess
    private let stderrLines = Locked<[String]>([])
    private let partialLine = Locked<[UInt8]>([])
    /// Set when stderr reached end of file: every line the gateway wrote is in `stderrLines`.
    private let stderrEnded = Locked(false)

    /// Writes `config` to `directory/routes.conf` and starts `storerelay serve` there.
    /// `shellPrefix` runs first in `/bin/sh` (for example `ulimit -f 64;`) before it execs the gateway.
    public init(
        config: String, directory: URL, environment: [String: String] = [:], arguments: [String] = [],
        shellPrefix: String? = nil
    ) throws {
        self.directory = directory
        configPath = directory.appendingPathComponent("routes.conf")
        try config.write(to: configPath, atomically: true, encoding: .utf8)
        process = ChildProcess()
        let serveArguments = ["serve", "--config", configPath.path] + arguments
        if let shellPrefix {
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", shellPrefix + " exec \"$0\" \"$@\"", TestPaths.binary.path] + serveArguments
        } else {
            process.executableURL = TestPaths.binary
            process.arguments = serveArguments
        }
        process.currentDirectoryURL = directory
        var env = ProcessInfo.processInfo.environment
        for (key, value) in environment { env[key] = value }
        process.environment = env
        let errPipe = Pipe()
        process.standardError = errPipe
        process.standardOutput = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        errPipe.fileHandleForReading.readabilityHandler = { [stderrLines, partialLine, stderrEnded] handle in
            let data = handle.availableData
            if data.isEmpty {
                handle.readabilityHandler = nil
                stderrEnded.withLock { $0 = true }
                return
            }
            let complete: [String] = partialLine.withLock { partial in
                partial.append(contentsOf: data)
                var lines: [String] = []
                while let newline = partial.firstIndex(of: 0x0A) {
                    lines.append(String(decoding: partial[..<newline], as: UTF8.self))
                    partial.removeSubrange(...newline)
                }
                return lines
            }
            if !complete.isEmpty { stderrLines.withLock { $0.append(contentsOf: complete) } }
        }
        try process.run()
    }

    deinit {
        process.killAndWait()
    }

    public var pid: Int32 { process.processIdentifier }
    public var isRunning: Bool { process.isRunning }

    /// Every line the gateway wrote to stderr so far.
    public var logLines: [String] { stderrLines.current }

    /// The log lines parsed as JSON objects (lines that are not JSON are skipped).
    public var logRecords: [JSONValue] {
        logLines.compactMap { try? JSONValue.parse($0) }
    }

    /// Waits until a log record satisfies `predicate`; returns it, or nil at the deadline or
    /// when the process exits first.
    public func waitForLog(timeout: Double = 20, where predicate: (JSONValue) -> Bool) -> JSONValue? {
        // Lines may still arrive after the exit, until stderr has been read to its end.
        LogWatch.waitForRecord(in: { logLines }, while: { process.isRunning || !stderrEnded.current },
                               timeout: timeout, where: predicate)
    }

    /// Waits for the `listening` line of `listener` ("public" or "admin") and returns its port.
    public func waitForPort(listener: String = "public", timeout: Double = 20) throws -> Int {
        guard let record = waitForLog(timeout: timeout, where: {
            $0["message"]?.stringValue == "listening" && $0["listener"]?.stringValue == listener
        }), let address = record["address"]?.stringValue,
            let port = address.split(separator: ":").last.flatMap({ Int($0) })
        else {
            throw GatewayProcessError(message: "gateway did not start listening; stderr:\n" + logLines.joined(separator: "\n"))
        }
        return port
    }

    /// Sends `signal` to the gateway.
    public func send(_ signal: Int32) { process.send(signal) }

    /// Waits for the process to exit and returns its status, or nil at the deadline. Once it
    /// has exited, also waits (up to 10 s more) for its stderr to be read to the end: the
    /// pipe's reader runs on its own queue and may lag behind the exit on a busy machine, and
    /// a test that reads `logLines` next must see the last words of the log.
    public func waitForExit(timeout: Double = 20) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning {
            if Date() > deadline { return nil }
            Thread.sleep(forTimeInterval: 0.01)
        }
        let drained = Date().addingTimeInterval(10)
        while !stderrEnded.current && Date() < drained { Thread.sleep(forTimeInterval: 0.01) }
        return process.terminationStatus
    }
}

/// Waiting for a line of a gateway's JSON log, wherever the lines come from.
public enum LogWatch {
    /// Polls `lines` until one parses to a record satisfying `predicate`; nil at the deadline,
    /// or once `isRunning` is false and a last look (after what a pipe may still hold
    /// arrives) finds nothing new.
    public static func waitForRecord(in lines: () -> [String], while isRunning: () -> Bool, timeout: Double,
                                     where predicate: (JSONValue) -> Bool) -> JSONValue? {
        let deadline = Date().addingTimeInterval(timeout)
        var seen = 0
        while Date() < deadline {
            let current = lines()
            for line in current[seen...] {
                if let record = try? JSONValue.parse(line), predicate(record) { return record }
            }
            seen = current.count
            if !isRunning() {
                Thread.sleep(forTimeInterval: 0.2)
                if lines().count == seen { return nil }
                continue
            }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return nil
    }
}

public struct GatewayProcessError: Error, CustomStringConvertible {
    public let message: String
    public init(message: String) { self.message = message }
    public var description: String { message }
}
