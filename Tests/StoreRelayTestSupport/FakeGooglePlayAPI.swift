import Foundation
import StoreRelayCore

/// Google's OAuth2 token endpoint and the Play Developer API as the enrichment tests see them:
/// `Tests/Fixtures/fake_google_play_api.py` as a child process over HTTPS (the shared test
/// CA), checking each assertion's RS256 signature with the `openssl` tool against a service
/// account key made here with `openssl genpkey`. See the script for its control file;
/// `control` rewrites it, and every request it answered is in `requests`.
public final class FakeGooglePlayAPI: @unchecked Sendable {
    // Invariant: every stored property is set once in init.
    public let port: Int
    /// The test CA that vouches for the fake's certificate (`google-api-url ... ca-file`).
    public let caFile: String
    /// The service account's JSON key file, its `token_uri` this fake's `/token`.
    public let serviceAccountFile: String
    /// The service account's private key, PKCS#8 PEM as Google writes it into the JSON.
    public let privateKeyPEM: String
    public let clientEmail = "storerelay-enrichment@acme-prod.iam.gserviceaccount.com"
    public let privateKeyId = "4f1c2b0d9e8a7c6b5a493827161504f3e2d1c0b9"
    public let directory: URL
    private let logFile: URL
    private let controlFile: URL
    private let process: ChildProcess

    public init() throws {
        directory = try TestPaths.makeTemporaryDirectory("storerelay-fake-google")
        logFile = directory.appendingPathComponent("requests.jsonl")
        controlFile = directory.appendingPathComponent("control.json")
        let keyFile = directory.appendingPathComponent("service-account.key").path
        let publicKey = directory.appendingPathComponent("public.pem").path
        try CommandRunner.run("openssl", ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", keyFile], check: true)
        try CommandRunner.run("openssl", ["pkey", "-in", keyFile, "-pubout", "-out", publicKey], check: true)
        privateKeyPEM = try String(contentsOfFile: keyFile, encoding: .utf8)
        _ = FileManager.default.createFile(atPath: logFile.path, contents: nil)
        try Data("{}".utf8).write(to: controlFile)
        let tls = try TLSTestCertificates.shared()
        caFile = tls.caFile
        process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", TestPaths.packageRoot.appendingPathComponent("Tests/Fixtures/fake_google_play_api.py").path,
            "--log", logFile.path, "--control", controlFile.path, "--cert", tls.localhost.certificateFile,
            "--key", tls.localhost.privateKeyFile, "--public-key", publicKey, "--email", clientEmail, "--key-id", privateKeyId,
        ]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        guard let port = output.fileHandleForReading.readLine().flatMap({ Int($0) }) else {
            process.killAndWait()
            throw GatewayProcessError(message: "the fake Google Play API did not start")
        }
        self.port = port
        serviceAccountFile = directory.appendingPathComponent("play-sa.json").path
        try ServiceAccountFile.write(
            to: serviceAccountFile, clientEmail: clientEmail, privateKeyId: privateKeyId, privateKeyPEM: privateKeyPEM,
            tokenURI: tokenURI)
    }

    deinit {
        process.killAndWait()
    }

    /// `https://127.0.0.1:PORT`, for `google-api-url`.
    public var url: String { "https://127.0.0.1:\(port)" }
    /// The token endpoint: the service account's `token_uri`, and its assertions' `aud`.
    public var tokenURI: String { "\(url)/token" }

    /// The routes.conf line that points the gateway's Developer API calls at this fake.
    public var apiURLLine: String { "google-api-url \(url) ca-file \(caFile)" }

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

    /// The token requests answered so far.
    public var tokenRequests: [JSONValue] { requests.filter { $0["endpoint"]?.stringValue == "token" } }
    /// The Developer API requests answered so far.
    public var apiRequests: [JSONValue] { requests.filter { $0["endpoint"]?.stringValue == "api" } }

    /// Waits until `predicate` holds for the requests answered, or the deadline passes.
    @discardableResult
    public func waitFor(timeout: Double = 20, _ predicate: ([JSONValue]) -> Bool) -> Bool {
        pollUntil(timeout: timeout, interval: 0.05) { predicate(requests) }
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
