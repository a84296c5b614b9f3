import Foundation
import StoreRelayCore

/// The App Store Server API as the reconciliation tests see it: `Tests/Fixtures/fake_appstore_api.py`
/// as a child process over HTTPS (the shared test CA), checking each request's JWT with the
/// `openssl` tool against a key made here with `openssl genpkey`. See the script for its
/// control file; `control` rewrites it, and every request it answered is in `requests`.
public final class FakeAppStoreAPI: @unchecked Sendable {
    // Invariant: every stored property is set once in init.
    public let port: Int
    /// The test CA that vouches for the fake's certificate (`apple-api-url ... ca-file`).
    public let caFile: String
    /// The In-App Purchase key the gateway signs with, PKCS#8 PEM as App Store Connect gives it.
    public let keyFile: String
    public let keyId = "ABC123DEFG"
    public let issuerId = "57246542-96fe-1a63-e053-0824d011072a"
    private let logFile: URL
    private let controlFile: URL
    private let process: ChildProcess

    public init(bundleId: String) throws {
        let directory = try TestPaths.makeTemporaryDirectory("storerelay-fake-apple")
        logFile = directory.appendingPathComponent("requests.jsonl")
        controlFile = directory.appendingPathComponent("control.json")
        keyFile = directory.appendingPathComponent("SubscriptionKey_ABC123DEFG.p8").path
        let publicKey = directory.appendingPathComponent("public.pem").path
        try CommandRunner.run("openssl", ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", keyFile], check: true)
        try CommandRunner.run("openssl", ["pkey", "-in", keyFile, "-pubout", "-out", publicKey], check: true)
        _ = FileManager.default.createFile(atPath: logFile.path, contents: nil)
        try Data("{}".utf8).write(to: controlFile)
        let tls = try TLSTestCertificates.shared()
        caFile = tls.caFile
        process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", TestPaths.packageRoot.appendingPathComponent("Tests/Fixtures/fake_appstore_api.py").path,
            "--log", logFile.path, "--control", controlFile.path, "--cert", tls.localhost.certificateFile,
            "--key", tls.localhost.privateKeyFile, "--public-key", publicKey, "--key-id", keyId, "--issuer", issuerId,
            "--bundle", bundleId,
        ]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        guard let port = output.fileHandleForReading.readLine().flatMap({ Int($0) }) else {
            process.killAndWait()
            throw GatewayProcessError(message: "the fake App Store Server API did not start")
        }
        self.port = port
    }

    deinit {
        process.killAndWait()
    }

    /// `https://127.0.0.1:PORT`, for `apple-api-url`.
    public var url: String { "https://127.0.0.1:\(port)" }

    /// The routes.conf lines that point an app at this fake: `apple-api-url` (top level) and
    /// the app block's `api-key`.
    public var apiURLLine: String { "apple-api-url \(url) ca-file \(caFile)" }
    public var apiKeyLine: String { "api-key \(keyFile) \(keyId) \(issuerId)" }

    /// Replaces the control file (atomically: the fake reads it on every request).
    public func control(_ json: JSONValue) throws {
        let temporary = controlFile.appendingPathExtension("tmp")
        try Data(json.serializedBytes()).write(to: temporary)
        guard rename(temporary.path, controlFile.path) == 0 else {
            throw GatewayProcessError(message: "cannot replace \(controlFile.path): errno \(errno)")
        }
    }

    /// Every request answered so far, oldest first.
    public var requests: [JSONValue] {
        guard let data = try? Data(contentsOf: logFile) else { return [] }
        return String(decoding: data, as: UTF8.self).split(separator: "\n").compactMap { try? JSONValue.parse(String($0)) }
    }

    /// The history requests answered so far.
    public var historyRequests: [JSONValue] {
        requests.filter { $0["path"]?.stringValue == "/inApps/v1/notifications/history" }
    }

    /// Waits until `predicate` holds for the requests answered, or the deadline passes.
    @discardableResult
    public func waitFor(timeout: Double = 20, _ predicate: ([JSONValue]) -> Bool) -> Bool {
        pollUntil(timeout: timeout, interval: 0.05) { predicate(requests) }
    }
}
