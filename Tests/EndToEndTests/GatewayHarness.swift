import Foundation
import StoreRelayTestSupport

/// A running gateway in a fresh directory, with helpers to post to it.
struct Gateway {
    let process: GatewayProcess
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
        shellPrefix: String? = nil
    ) throws {
        let directory = try directory ?? TestPaths.makeTemporaryDirectory("storerelay-e2e")
        self.directory = directory
        process = try GatewayProcess(
            config: config, directory: directory, environment: environment, shellPrefix: shellPrefix)
        port = try process.waitForPort()
    }

    /// Wraps a gateway process the test manages itself.
    init(process: GatewayProcess, port: Int, directory: URL) {
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
