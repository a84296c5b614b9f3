import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A real `rabbitmq-server` (Debian's package) on free loopback ports, with its own node name,
/// mnesia and log directories, config file, an empty plugin list (no management listener to
/// clash with another broker) and its own HOME (so its Erlang cookie is its own). Started
/// once per suite: a broker takes seconds to boot. Killed (SIGKILL) when released.
///
/// Read back with `pika` through `python(_:)`: a real client, never one written for the test.
public final class RabbitMQProcess: @unchecked Sendable {
    // Invariant: `process` is replaced only by `restart`, called from the test's own thread.
    public let directory: URL
    public let port: Int
    /// The `amqps` listener's port, when started with a TLS identity.
    public let tlsPort: Int?
    private let distributionPort: Int
    private let nodeName: String
    private var process: ChildProcess

    /// The broker script itself: `/usr/sbin/rabbitmq-server` is a wrapper that switches to the
    /// `rabbitmq` user, who cannot write this test's directories.
    static let executable = "/usr/lib/rabbitmq/bin/rabbitmq-server"

    /// Whether the broker and the `pika` client are installed (script/setup installs both).
    public static var isAvailable: Bool {
        FileManager.default.isExecutableFile(atPath: executable)
            && (try? CommandRunner.run("python3", ["-c", "import pika"]).status) == 0
    }

    public static let skipMessage = "rabbitmq-server or python3-pika is not installed (script/setup installs them)"

    /// `tls`: a certificate and key for an extra `amqps` listener (clients are not asked for
    /// a certificate).
    public init(tls: TLSTestCertificates.Identity? = nil) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("storerelay-rabbitmq-\(UUID().uuidString)")
        for sub in ["mnesia", "log", "home"] {
            try FileManager.default.createDirectory(at: directory.appendingPathComponent(sub), withIntermediateDirectories: true)
        }
        port = try RedisServerProcess.freePort()
        distributionPort = try RedisServerProcess.freePort()
        tlsPort = try tls.map { _ in try RedisServerProcess.freePort() }
        nodeName = "storerelay\(UInt32.random(in: 0...UInt32.max))@localhost"
        var configuration = "listeners.tcp.default = 127.0.0.1:\(port)\nloopback_users = none\n"
        if let tls, let tlsPort {
            configuration += """
                listeners.ssl.default = 127.0.0.1:\(tlsPort)
                ssl_options.certfile = \(tls.certificateFile)
                ssl_options.keyfile = \(tls.privateKeyFile)
                ssl_options.verify = verify_none
                ssl_options.fail_if_no_peer_cert = false

                """
        }
        try configuration.write(to: directory.appendingPathComponent("rabbitmq.conf"), atomically: true, encoding: .utf8)
        try "[].\n".write(to: directory.appendingPathComponent("enabled_plugins"), atomically: true, encoding: .utf8)
        process = ChildProcess()
        try launch()
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// `amqp://guest:guest@127.0.0.1:PORT/%2f`.
    public var url: String { "amqp://guest:guest@127.0.0.1:\(port)/%2f" }

    /// Kills the broker at once (SIGKILL): what a crash looks like to clients. Durable queues
    /// and the persistent messages it confirmed survive it.
    public func stop() {
        process.killAndWait()
    }

    /// Starts the broker again on the same ports and directories.
    public func restart() throws {
        stop()
        process = ChildProcess()
        try launch()
    }

    public var isRunning: Bool { process.isRunning }

    /// Runs a Python script with `pika` imported and `params` bound to this broker's
    /// connection parameters; returns its standard output. Throws when it exits non-zero.
    public func python(_ script: String) throws -> String {
        let prelude = """
            import pika, json, sys
            params = pika.URLParameters('amqp://guest:guest@127.0.0.1:\(port)/%2f')

            """
        return try CommandRunner.run("python3", ["-c", prelude + script], check: true).stdout
    }

    /// Declares a durable topic exchange and a durable queue bound to it with `binding`,
    /// emptying the queue (each test starts from nothing).
    public func declare(exchange: String, queue: String, binding: String) throws {
        _ = try python("""
            c = pika.BlockingConnection(params); ch = c.channel()
            ch.exchange_declare('\(exchange)', 'topic', durable=True)
            ch.queue_declare('\(queue)', durable=True)
            ch.queue_bind('\(queue)', '\(exchange)', '\(binding)')
            ch.queue_purge('\(queue)')
            c.close()
            """)
    }

    /// Takes every message now in `queue` (acknowledged, so each is read once): one JSON
    /// object per message with `key` (routing key), `id` (message-id), `mode` (delivery
    /// mode), `type` (content type), `headers` and `body` (UTF-8).
    public func drain(queue: String) throws -> [String] {
        let output = try python("""
            c = pika.BlockingConnection(params); ch = c.channel()
            while True:
                m, p, body = ch.basic_get('\(queue)', auto_ack=True)
                if m is None: break
                headers = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in (p.headers or {}).items()}
                print(json.dumps({'key': m.routing_key, 'id': p.message_id, 'mode': p.delivery_mode,
                                  'type': p.content_type, 'headers': headers, 'body': body.decode()}))
            c.close()
            """)
        return output.split(separator: "\n").map(String.init)
    }

    private func launch() throws {
        process.executableURL = URL(fileURLWithPath: Self.executable)
        process.environment = ProcessInfo.processInfo.environment.merging([
            "HOME": directory.appendingPathComponent("home").path,
            "RABBITMQ_NODENAME": nodeName,
            "RABBITMQ_NODE_IP_ADDRESS": "127.0.0.1",
            "RABBITMQ_NODE_PORT": String(port),
            "RABBITMQ_DIST_PORT": String(distributionPort),
            "RABBITMQ_MNESIA_BASE": directory.appendingPathComponent("mnesia").path,
            "RABBITMQ_LOG_BASE": directory.appendingPathComponent("log").path,
            "RABBITMQ_CONFIG_FILE": directory.appendingPathComponent("rabbitmq.conf").path,
            "RABBITMQ_ENABLED_PLUGINS_FILE": directory.appendingPathComponent("enabled_plugins").path,
            "RABBITMQ_PID_FILE": directory.appendingPathComponent("rabbitmq.pid").path,
            // The script then execs the VM instead of waiting on it in a shell that traps
            // signals: the process's pid is the broker's, so SIGKILL reaches the broker.
            "RABBITMQ_ALLOW_INPUT": "1",
            "RABBITMQ_SERVER_START_ARGS": "-noinput",
        ]) { _, new in new }
        let log = directory.appendingPathComponent("console.log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let handle = try FileHandle(forWritingTo: log)
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        try ExitWatchdog.watch(process.processIdentifier)
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            if greets() { return }
            guard process.isRunning else { break }
            usleep(100_000)
        }
        let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        stop()
        throw RedisServerError("rabbitmq-server did not accept AMQP on port \(port); its console:\n\(text.suffix(3000))")
    }

    /// Whether the broker answers the protocol header with a method frame (Connection.Start),
    /// over a plain blocking socket (the harness must not depend on the client under test).
    private func greets() -> Bool {
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
        var timeout = timeval(tv_sec: 2, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let header: [UInt8] = Array("AMQP".utf8) + [0, 0, 9, 1]
        guard write(fd, header, header.count) == header.count else { return false }
        var reply = [UInt8](repeating: 0, count: 16)
        return read(fd, &reply, reply.count) > 0 && reply[0] == 1
    }
}
