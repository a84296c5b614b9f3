import Foundation
import StoreRelayCore
#if canImport(Glibc)
import Glibc
#endif

/// A real `nats-server` with JetStream (`-js`) child process on a free loopback port with its
/// own store directory, optionally with user/password or token authentication and TLS.
/// Streams are made and read back with the real Python client (`nats-py`), never with the
/// client under test. Killed (SIGKILL) when released.
public final class NATSServerProcess: @unchecked Sendable {
    // Invariant: `process` is replaced only by `restart`, called from the test's own thread.
    public let directory: URL
    public let port: Int
    /// How the Python client authenticates and trusts the server.
    public let user: String?
    public let password: String?
    public let token: String?
    public let tls: (certificateFile: String, privateKeyFile: String, caFile: String)?
    private var arguments: [String]
    private var process = ChildProcess()

    static let executable = ["/usr/sbin/nats-server", "/usr/bin/nats-server", "/usr/local/bin/nats-server"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }

    /// Whether `nats-server` is installed and Python has `nats-py`; tests that need them skip.
    public static let isAvailable: Bool = {
        guard executable != nil else { return false }
        return (try? CommandRunner.run("python3", ["-c", "import nats.js"]).status) == 0
    }()

    /// Why the tests that need a NATS server are skipped.
    public static let skipMessage = "nats-server or Python's nats-py is not installed (script/setup installs both)"

    public init(user: String? = nil, password: String? = nil, token: String? = nil,
                tls: (certificateFile: String, privateKeyFile: String, caFile: String)? = nil) throws {
        guard let executable = Self.executable else { throw RedisServerError(Self.skipMessage) }
        directory = try TestPaths.makeTemporaryDirectory("storerelay-nats")
        port = try RedisServerProcess.freePort()
        self.user = user
        self.password = password
        self.token = token
        self.tls = tls
        arguments = [executable, "-js", "-sd", directory.path, "-a", "127.0.0.1", "-p", String(port),
                     "-l", directory.appendingPathComponent("nats.log").path]
        if let user, let password { arguments += ["--user", user, "--pass", password] }
        if let token { arguments += ["--auth", token] }
        if let tls { arguments += ["--tls", "--tlscert", tls.certificateFile, "--tlskey", tls.privateKeyFile] }
        try launch()
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// `nats://127.0.0.1:PORT`, or `tls://localhost:PORT` for a TLS server.
    public var url: String { tls == nil ? "nats://127.0.0.1:\(port)" : "tls://localhost:\(port)" }

    /// Kills the server at once (SIGKILL): what a crash looks like to clients.
    public func stop() {
        process.killAndWait()
    }

    /// Starts the server again on the same port and store (its streams are recovered).
    public func restart() throws {
        stop()
        process = ChildProcess()
        try launch()
    }

    /// Freezes the server (SIGSTOP): its sockets stay open and nothing answers, which is what
    /// a hung host or a partition looks like to clients.
    public func pause() { process.freeze() }

    /// Lets a paused server run again (SIGCONT).
    public func resume() { process.send(SIGCONT) }

    private func launch() throws {
        process.executableURL = URL(fileURLWithPath: arguments[0])
        process.arguments = Array(arguments.dropFirst())
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if (try? python("await nc.jetstream().account_info()")) != nil { return }
            guard process.isRunning else { break }
            usleep(50_000)
        }
        let log = (try? String(contentsOf: directory.appendingPathComponent("nats.log"), encoding: .utf8)) ?? ""
        throw RedisServerError("nats-server did not take JetStream requests on port \(port); its log:\n\(log.suffix(2000))")
    }

    /// Creates stream `name` on `subjects`; `maxMessages` with `discard new` refuses publishes
    /// once full (a refused publish for the tests).
    public func addStream(_ name: String, subjects: [String], maxMessages: Int? = nil) throws {
        let limit = maxMessages.map { ", max_msgs=\($0), discard=nats.js.api.DiscardPolicy.NEW" } ?? ""
        let list = "[" + subjects.map { "'\($0)'" }.joined(separator: ", ") + "]"
        try python("await nc.jetstream().add_stream(name='\(name)', subjects=\(list)\(limit))")
    }

    /// Every message in stream `name`, in order: `{"subject":..,"headers":{..},"data":".."}`.
    public func messages(in name: String) throws -> [JSONValue] {
        let output = try python("""
            js = nc.jetstream()
            info = await js.stream_info('\(name)')
            for seq in range(info.state.first_seq, info.state.last_seq + 1):
                m = await js.get_msg('\(name)', seq)
                print(json.dumps({'subject': m.subject, 'seq': m.seq, 'headers': dict(m.headers or {}), 'data': m.data.decode()}))
            """)
        return try output.split(separator: "\n").map { try JSONValue.parse(String($0)) }
    }

    /// Runs `body` (Python, inside an async function with `nc` connected) and returns its output.
    @discardableResult
    public func python(_ body: String) throws -> String {
        var options: [String] = []
        if let user, let password { options.append("user='\(user)', password='\(password)'") }
        if let token { options.append("token='\(token)'") }
        var prelude = ""
        if let tls {
            prelude = "import ssl\nctx = ssl.create_default_context(cafile='\(tls.caFile)')\n"
            options.append("tls=ctx")
        }
        let connect = (["'\(url)'"] + options + ["allow_reconnect=False", "connect_timeout=2"]).joined(separator: ", ")
        let indented = body.split(separator: "\n", omittingEmptySubsequences: false).map { "    " + $0 }.joined(separator: "\n")
        let script = """
            import asyncio, json, nats, nats.js.api
            \(prelude)
            async def main():
                nc = await nats.connect(\(connect))
            \(indented)
                await nc.close()
            asyncio.run(main())
            """
        let result = try CommandRunner.run("python3", ["-c", script])
        guard result.status == 0 else { throw RedisServerError("python (nats-py) failed: \(result.stderr.suffix(1500))") }
        return result.stdout
    }
}
