import Foundation
import StoreRelayCore

/// The App Store Server API as the reconciliation tests see it: `Tests/Fixtures/fake_appstore_api.py`
/// as a child process over HTTPS (the shared test CA), checking each request's JWT with the
/// `openssl` tool against a key made here with `openssl genpkey`. See the script for its
/// control file; `control` rewrites it, and every request it answered is in `requests`.
public final class FakeAppStoreAPI: @unchecked Sendable {
    // Invariant: every stored property is set once in init.
    /// The In-App Purchase key the gateway signs with, PKCS#8 PEM as App Store Connect gives it.
    public let keyFile: String
    public let keyId = "ABC123DEFG"
    public let issuerId = "57246542-96fe-1a63-e053-0824d011072a"
    private let server: PythonFakeServer

    public init(bundleId: String) throws {
        let directory = try TestPaths.makeTemporaryDirectory("storerelay-fake-apple")
        keyFile = directory.appendingPathComponent("SubscriptionKey_ABC123DEFG.p8").path
        let publicKey = directory.appendingPathComponent("public.pem").path
        try CommandRunner.run("openssl", ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", keyFile], check: true)
        try CommandRunner.run("openssl", ["pkey", "-in", keyFile, "-pubout", "-out", publicKey], check: true)
        server = try PythonFakeServer(
            script: "fake_appstore_api.py", name: "fake App Store Server API", directory: directory,
            arguments: ["--public-key", publicKey, "--key-id", keyId, "--issuer", issuerId, "--bundle", bundleId])
    }

    public var port: Int { server.port }
    /// The test CA that vouches for the fake's certificate (`apple-api-url ... ca-file`).
    public var caFile: String { server.caFile }
    /// `https://127.0.0.1:PORT`, for `apple-api-url`.
    public var url: String { server.url }

    /// The routes.conf lines that point an app at this fake: `apple-api-url` (top level) and
    /// the app block's `api-key`.
    public var apiURLLine: String { "apple-api-url \(url) ca-file \(caFile)" }
    public var apiKeyLine: String { "api-key \(keyFile) \(keyId) \(issuerId)" }

    /// Replaces the control file (the fake reads it on every request).
    public func control(_ json: JSONValue) throws { try server.control(json) }

    /// Every request answered so far, oldest first.
    public var requests: [JSONValue] { server.requests }

    /// The history requests answered so far.
    public var historyRequests: [JSONValue] {
        requests.filter { $0["path"]?.stringValue == "/inApps/v1/notifications/history" }
    }

    /// Waits until `predicate` holds for the requests answered, or the deadline passes.
    @discardableResult
    public func waitFor(timeout: Double = 20, _ predicate: ([JSONValue]) -> Bool) -> Bool {
        server.waitFor(timeout: timeout, predicate)
    }
}
