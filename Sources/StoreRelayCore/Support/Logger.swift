#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Severity of a log line, ordered from the most to the least verbose.
public enum LogLevel: Int, Sendable, Comparable, CaseIterable {
    case trace, debug, info, notice, warning, error, critical

    public var name: String {
        switch self {
        case .trace: "trace"
        case .debug: "debug"
        case .info: "info"
        case .notice: "notice"
        case .warning: "warning"
        case .error: "error"
        case .critical: "critical"
        }
    }

    public init?(name: String) {
        guard let level = LogLevel.allCases.first(where: { $0.name == name.lowercased() }) else { return nil }
        self = level
    }

    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// Where finished log lines go. The default writes each line with one `write(2)` to stderr.
public protocol LogSink: Sendable {
    func write(line: String)
}

/// Writes each line to file descriptor 2 in one `write(2)`, so lines from many threads never
/// interleave and no `FILE*` buffer is shared across threads.
public struct StandardErrorSink: LogSink {
    public init() {}
    public func write(line: String) {
        var bytes = Array(line.utf8)
        bytes.append(UInt8(ascii: "\n"))
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let n = Glibc.write(2, buffer.baseAddress! + offset, buffer.count - offset)
                if n <= 0 { if n < 0 && errno == EINTR { continue }; return }
                offset += n
            }
        }
    }
}

/// Keeps lines in memory; for tests that assert on what was logged.
public final class MemorySink: LogSink {
    private let storage = Locked<[String]>([])
    public init() {}
    public func write(line: String) { storage.withLock { $0.append(line) } }
    public var lines: [String] { storage.current }
}

/// A structured logger shaped like swift-log: a level, `@autoclosure` messages and dotted
/// metadata keys. Each line is one JSON object: `{"time":..,"level":..,"message":..,<fields>}`.
///
/// Never pass secrets, tokens or whole signed payloads as metadata at `info` or above.
public struct Logger: Sendable {
    /// Dotted keys and typed values (`LogValue`): `("attempt", 3)` is written as a number.
    public typealias Metadata = [(String, any LogValue)]

    public var level: LogLevel
    public let label: String
    private let sink: any LogSink

    public init(label: String, level: LogLevel = .info, sink: any LogSink = StandardErrorSink()) {
        self.label = label
        self.level = level
        self.sink = sink
    }

    /// A logger that writes nothing.
    public static var disabled: Logger { Logger(label: "disabled", level: .critical, sink: NullSink()) }

    public func log(_ level: LogLevel, _ message: @autoclosure () -> String, _ metadata: @autoclosure () -> Metadata = []) {
        guard level >= self.level else { return }
        var line = "{\"time\":"
        line += JSONStringEscaping.quoted(Timestamp.now().iso8601)
        line += ",\"level\":" + JSONStringEscaping.quoted(level.name)
        line += ",\"logger\":" + JSONStringEscaping.quoted(label)
        line += ",\"message\":" + JSONStringEscaping.quoted(message())
        for (key, value) in metadata() {
            line += "," + JSONStringEscaping.quoted(key) + ":"
            value.appendJSON(to: &line)
        }
        line += "}"
        sink.write(line: line)
    }

    public func trace(_ message: @autoclosure () -> String, _ metadata: @autoclosure () -> Metadata = []) {
        log(.trace, message(), metadata())
    }
    public func debug(_ message: @autoclosure () -> String, _ metadata: @autoclosure () -> Metadata = []) {
        log(.debug, message(), metadata())
    }
    public func info(_ message: @autoclosure () -> String, _ metadata: @autoclosure () -> Metadata = []) {
        log(.info, message(), metadata())
    }
    public func notice(_ message: @autoclosure () -> String, _ metadata: @autoclosure () -> Metadata = []) {
        log(.notice, message(), metadata())
    }
    public func warning(_ message: @autoclosure () -> String, _ metadata: @autoclosure () -> Metadata = []) {
        log(.warning, message(), metadata())
    }
    public func error(_ message: @autoclosure () -> String, _ metadata: @autoclosure () -> Metadata = []) {
        log(.error, message(), metadata())
    }
    public func critical(_ message: @autoclosure () -> String, _ metadata: @autoclosure () -> Metadata = []) {
        log(.critical, message(), metadata())
    }
}

private struct NullSink: LogSink {
    func write(line: String) {}
}
