import Foundation
import StoreRelayCore

/// Google's OAuth2 token endpoint and the Play Developer API as the enrichment tests see them:
/// `Tests/Fixtures/fake_google_play_api.py` as a child process over HTTPS (the shared test
/// CA), checking each assertion's RS256 signature with the `openssl` tool against a service
/// account key made here with `openssl genpkey`. See the script for its control file;
/// `control` rewrites it, and every request it answered is in `requests`.
public final class FakeGooglePlayAPI: @unchecked Sendable {
    // Invariant: every stored property is set once in init.
    /// The service account's JSON key file, its `token_uri` this fake's `/token`.
    public let serviceAccountFile: String
    /// The service account's private key, PKCS#8 PEM as Google writes it into the JSON.
    public let privateKeyPEM: String
    public let clientEmail = "storerelay-enrichment@acme-prod.iam.gserviceaccount.com"
    public let privateKeyId = "4f1c2b0d9e8a7c6b5a493827161504f3e2d1c0b9"
    public let directory: URL
    private let server: PythonFakeServer

    public init() throws {
        directory = try TestPaths.makeTemporaryDirectory("storerelay-fake-google")
        let keyFile = directory.appendingPathComponent("service-account.key").path
        let publicKey = directory.appendingPathComponent("public.pem").path
        try CommandRunner.run("openssl", ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", keyFile], check: true)
        try CommandRunner.run("openssl", ["pkey", "-in", keyFile, "-pubout", "-out", publicKey], check: true)
        privateKeyPEM = try String(contentsOfFile: keyFile, encoding: .utf8)
        server = try PythonFakeServer(
            script: "fake_google_play_api.py", name: "fake Google Play API", directory: directory,
            arguments: ["--public-key", publicKey, "--email", clientEmail, "--key-id", privateKeyId])
        serviceAccountFile = directory.appendingPathComponent("play-sa.json").path
        try ServiceAccountFile.write(
            to: serviceAccountFile, clientEmail: clientEmail, privateKeyId: privateKeyId, privateKeyPEM: privateKeyPEM,
            tokenURI: tokenURI)
    }

    public var port: Int { server.port }
    /// The test CA that vouches for the fake's certificate (`google-api-url ... ca-file`).
    public var caFile: String { server.caFile }
    /// `https://127.0.0.1:PORT`, for `google-api-url`.
    public var url: String { server.url }
    /// The token endpoint: the service account's `token_uri`, and its assertions' `aud`.
    public var tokenURI: String { "\(url)/token" }

    /// The routes.conf line that points the gateway's Developer API calls at this fake.
    public var apiURLLine: String { "google-api-url \(url) ca-file \(caFile)" }

    /// Replaces the control file (the fake reads it on every request).
    public func control(_ json: JSONValue) throws { try server.control(json) }

    /// Every request answered so far, oldest first.
    public var requests: [JSONValue] { server.requests }

    /// The token requests answered so far.
    public var tokenRequests: [JSONValue] { requests.filter { $0["endpoint"]?.stringValue == "token" } }
    /// The Developer API requests answered so far.
    public var apiRequests: [JSONValue] { requests.filter { $0["endpoint"]?.stringValue == "api" } }

    /// Waits until `predicate` holds for the requests answered, or the deadline passes.
    @discardableResult
    public func waitFor(timeout: Double = 20, _ predicate: ([JSONValue]) -> Bool) -> Bool {
        server.waitFor(timeout: timeout, predicate)
    }
}

/// Writes Google Cloud service-account key files for tests, shaped as the console downloads them.
public enum ServiceAccountFile {
    /// The JSON document; `overrides` replace (or, with `.null`, drop) members.
    public static func json(
        clientEmail: String, privateKeyId: String, privateKeyPEM: String, tokenURI: String,
        projectId: String = "acme-prod", overrides: [(String, JSONValue)] = []
    ) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("type", "service_account"), ("project_id", .string(projectId)), ("private_key_id", .string(privateKeyId)),
            ("private_key", .string(privateKeyPEM)), ("client_email", .string(clientEmail)), ("client_id", "103746582910374658291"),
            ("auth_uri", "https://accounts.google.com/o/oauth2/auth"), ("token_uri", .string(tokenURI)),
            ("auth_provider_x509_cert_url", "https://www.googleapis.com/oauth2/v1/certs"),
            ("universe_domain", "googleapis.com"),
        ]
        for (key, value) in overrides {
            if let index = members.firstIndex(where: { $0.0 == key }) {
                if value == .null { members.remove(at: index) } else { members[index].1 = value }
            } else if value != .null {
                members.append((key, value))
            }
        }
        return .object(JSONObject(members.map { (key: $0.0, value: $0.1) }))
    }

    /// Writes the file with mode 0600, as a key should be kept.
    public static func write(
        to path: String, clientEmail: String, privateKeyId: String, privateKeyPEM: String, tokenURI: String,
        overrides: [(String, JSONValue)] = []
    ) throws {
        let document = json(clientEmail: clientEmail, privateKeyId: privateKeyId, privateKeyPEM: privateKeyPEM,
                            tokenURI: tokenURI, overrides: overrides)
        try Data(document.serializedBytes()).write(to: URL(fileURLWithPath: path))
        guard chmod(path, 0o600) == 0 else { throw GatewayProcessError(message: "cannot chmod \(path): errno \(errno)") }
    }
}
