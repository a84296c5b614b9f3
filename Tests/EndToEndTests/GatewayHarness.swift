import Foundation
import Testing
import StoreRelayCore
import StoreRelayGateway
import StoreRelayTestSupport

/// The signer of the end-to-end tests that need "some valid notification": the process's
/// shared test CA, so they run in every clone. Apple's real notifications in
/// ../shared/vectors are for the tests whose subject they are (`.requiresAppleVectors`).
let testSigner: NotificationSigner = {
    do { return try NotificationSigner(authority: .shared) } catch { fatalError("cannot load the test CA's leaf key: \(error)") }
}()

extension Trait where Self == ConditionTrait {
    /// Runs a test only where Apple's real vectors are (../shared/vectors, absent in a user's
    /// own clone); elsewhere Swift Testing reports it as skipped, with the reason.
    static var requiresAppleVectors: Self { .enabled(if: Vectors.available, Comment(rawValue: Vectors.skipMessage)) }
}

/// The JWS of an Apple body `{"signedPayload":"<JWS>"}`.
func signedPayload(of body: String) throws -> String {
    try #require(try JSONValue.parse(body)["signedPayload"]?.stringValue)
}

/// `jws` with its payload rewritten (the notification type changed) but its header and
/// signature kept, as a forger would send it: the signature no longer matches.
func tampered(_ jws: String) throws -> String {
    let parts = jws.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    try #require(parts.count == 3)
    let payload = String(decoding: try #require(Base64.urlDecode(parts[1])), as: UTF8.self)
    let forged = payload.replacingOccurrences(of: #""notificationType":""#, with: #""notificationType":"REFUND_"#)
    try #require(forged != payload, "no notificationType to tamper with")
    return parts[0] + "." + Base64.urlEncode(Array(forged.utf8)) + "." + parts[2]
}

/// A running gateway in a fresh directory, with helpers to post to it: assembled in the
/// test process unless the test needs a process of its own (`.childProcess`).
struct Gateway {
    enum Host {
        case inProcess
        /// `storerelay serve` as a child: for `kill -9`, `SIGSTOP`, resource limits and what
        /// only the command line does.
        case childProcess
    }

    let process: any GatewayHost
    let port: Int
    let directory: URL

    static let path = "/appstore/notifications"

    /// A minimal configuration: loopback on an ephemeral port, data in the test directory,
    /// everything routed to one file queue. `extra` is appended verbatim.
    static func config(_ extra: String = "") -> String {
        bareConfig("""
            destination all file ./data/queues/all
            route * * * -> all
            \(extra)
            """)
    }

    /// A fresh directory for a gateway whose configuration says `trust-root ./test-root.pem`:
    /// `authority`'s root is written there.
    static func directory(trusting authority: TestCertificateAuthority, _ prefix: String) throws -> URL {
        let directory = try TestPaths.makeTemporaryDirectory(prefix)
        try authority.rootPEM.write(to: directory.appendingPathComponent("test-root.pem"), atomically: true, encoding: .utf8)
        return directory
    }

    /// `config(extra)` trusting the shared test CA; the gateway's directory must come from
    /// `trustingDirectory` (or `directory(trusting:)`), which holds its root.
    static func trustingConfig(_ extra: String = "") -> String {
        config("trust-root ./test-root.pem\n" + extra)
    }

    /// A fresh directory holding the shared test CA's root as `test-root.pem`.
    static func trustingDirectory(_ prefix: String = "storerelay-e2e") throws -> URL {
        try directory(trusting: testSigner.authority, prefix)
    }

    /// Listener, path and data only: `body` declares every destination and route. The
    /// dedupe window is ten years because Apple's real notifications in ../shared/vectors
    /// were signed years ago: with the default window they would be quarantined as stale
    /// (`StaleReplayTests` covers that).
    static func bareConfig(_ body: String, listen: String = "127.0.0.1:0", dedupeWindow: String = "3650d") -> String {
        """
        listen \(listen)
        admin 127.0.0.1:0
        path \(path)
        data ./data
        read-timeout 2s
        dedupe-window \(dedupeWindow)
        \(body)
        """
    }

    init(
        config: String = Gateway.config(), directory: URL? = nil, environment: [String: String] = [:],
        host: Host = .inProcess, hooks: GatewayTestHooks = GatewayTestHooks(), shellPrefix: String? = nil
    ) throws {
        let directory = try directory ?? TestPaths.makeTemporaryDirectory("storerelay-e2e")
        self.directory = directory
        if host == .childProcess || shellPrefix != nil {
            process = try GatewayProcess(config: config, directory: directory, environment: environment, shellPrefix: shellPrefix)
        } else {
            process = try InProcessGateway(config: config, directory: directory, environment: environment, hooks: hooks)
        }
        port = try process.waitForPort()
    }

    /// Wraps a gateway the test manages itself.
    init(process: any GatewayHost, port: Int, directory: URL) {
        self.process = process
        self.port = port
        self.directory = directory
    }

    var baseURL: String { "http://127.0.0.1:\(port)" }
    var notificationURL: String { baseURL + Gateway.path }

    func post(signedPayload: String, path: String = Gateway.path) throws -> CurlResponse {
        try Curl.post(baseURL + path, json: appleBody(signedPayload: signedPayload))
    }

    func post(json: String, path: String = Gateway.path) throws -> CurlResponse {
        try Curl.post(baseURL + path, json: json)
    }

    /// The journal's segment files.
    var journalSegments: [URL] {
        let dir = directory.appendingPathComponent("data/journal")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
        return names.filter { $0.hasSuffix(".log") }.sorted().map { dir.appendingPathComponent($0) }
    }

    /// True when some journal segment contains `text` (event ids are stored as text).
    func journalContains(_ text: String) -> Bool {
        journalSegments.contains { url in
            guard let data = try? Data(contentsOf: url) else { return false }
            return data.range(of: Data(text.utf8)) != nil
        }
    }
}

/// A running gateway and its admin listener: the port from its `listening` line, the token
/// it wrote to `data/admin.token`.
struct AdminGateway {
    let gateway: Gateway
    let adminPort: Int
    let token: String

    init(_ gateway: Gateway) throws {
        self.gateway = gateway
        adminPort = try gateway.process.waitForPort(listener: "admin")
        token = try String(contentsOf: gateway.directory.appendingPathComponent("data/admin.token"), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    var auth: [String] { ["Authorization: Bearer \(token)"] }

    func get(_ path: String) throws -> CurlResponse {
        try Curl.get("http://127.0.0.1:\(adminPort)\(path)", headers: auth)
    }

    func post(_ path: String, json: String = "{}") throws -> CurlResponse {
        try Curl.post("http://127.0.0.1:\(adminPort)\(path)", json: json, headers: auth)
    }

    /// The Prometheus text of `/metrics`.
    var metrics: String {
        get throws { try Curl.get("http://127.0.0.1:\(adminPort)/metrics").body }
    }

    /// Where event `id`'s delivery to `destination` (nil: its first) stands (`pending`,
    /// `delivered`...).
    func deliveryState(_ id: String, _ destination: String? = nil) -> String? {
        let deliveries = (try? get("/api/events/\(id)"))?.json?["deliveries"]?.arrayValue ?? []
        return deliveries.first { destination == nil || $0["destination"]?.stringValue == destination }?["state"]?.stringValue
    }
}
