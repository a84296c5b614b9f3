import Foundation
import Testing
import StoreRelayCore
import StoreRelayCrypto
import StoreRelayTestSupport

/// `storerelay simulate --store play` as a user runs it: a saved push, a push posted with its
/// Authorization header, and the dev key set served for `google-certs-url`, whose key
/// verifies the saved push's token.
@Suite("Simulator: Google Play", .serialized, .timeLimit(.minutes(2)))
struct SimulatePlayTests {
    static func directory() throws -> URL {
        let directory = try TestPaths.makeTemporaryDirectory("storerelay-simulate-play")
        try "data ./data\n".write(to: directory.appendingPathComponent("routes.conf"), atomically: true, encoding: .utf8)
        return directory
    }

    @Test func savesThePushWithItsAuthorization() throws {
        let directory = try Self.directory()
        let out = directory.appendingPathComponent("push.json")
        let result = try CommandRunner.storerelay(
            ["simulate", "--store", "play", "--type", "ONE_TIME_PRODUCT_PURCHASED", "--bundle", "com.acme.journal",
             "--audience", "https://relay.acme.com/play", "--out", out.path, "--config", "routes.conf"], directory: directory)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("created a dev Play key"))
        let (authorization, body) = try Self.saved(String(decoding: try Data(contentsOf: out), as: UTF8.self))
        #expect(authorization.hasPrefix("Bearer ey"))
        let data = try #require(body["message"]?["data"]?.stringValue)
        let notification = try JSONValue.parse(try #require(Base64.decode(data)))
        #expect(notification["packageName"]?.stringValue == "com.acme.journal")
        #expect(notification["oneTimeProductNotification"]?["notificationType"]?.int64Value == 1)
        var info = stat()
        #expect(stat(directory.appendingPathComponent("data/dev-play/key.pem").path, &info) == 0 && info.st_mode & 0o777 == 0o600)

        let stdout = try CommandRunner.storerelay(
            ["simulate", "--store=play", "--type", "TEST", "--audience", "x", "--config", "routes.conf"], directory: directory)
        #expect(stdout.status == 0 && !stdout.stderr.contains("created"), "\(stdout.stderr)")
        #expect(try Self.saved(stdout.stdout).body["message"]?["messageId"] != nil)
    }

    /// The Authorization value and the body of a push `--out` saved.
    static func saved(_ text: String) throws -> (authorization: String, body: JSONValue) {
        let parts = text.components(separatedBy: "\n\n")
        try #require(parts.count == 2, "\(text.prefix(200))")
        let headers = parts[0].split(separator: "\n")
        #expect(headers.count == 2 && headers[1] == "Content-Type: application/json")
        let authorization = try #require(headers.first { $0.hasPrefix("Authorization: ") }).dropFirst("Authorization: ".count)
        return (String(authorization), try JSONValue.parse(parts[1]))
    }

    /// The saved push is what `storerelay verify` takes, against the dev key set on disk.
    @Test func aSavedPushVerifiesOfflineAgainstTheDevKeySet() throws {
        let directory = try Self.directory()
        try """
            data ./data
            play com.acme.journal {
                push-audience https://relay.acme.com/play
                push-account storerelay-simulate@storerelay-dev.iam.gserviceaccount.com
            }
            path /play/notifications play
            """.write(to: directory.appendingPathComponent("play.conf"), atomically: true, encoding: .utf8)
        let saved = try CommandRunner.storerelay(
            ["simulate", "--store", "play", "--type", "SUBSCRIPTION_RENEWED", "--audience", "https://relay.acme.com/play",
             "--out", "push.http", "--config", "play.conf"], directory: directory)
        #expect(saved.status == 0, "\(saved.stderr)")
        let verified = try CommandRunner.storerelay(
            ["verify", "--keys", "data/dev-play/certs.json", "--config", "play.conf", "push.http"], directory: directory)
        #expect(verified.status == 0, "\(verified.stderr)")
        let event = try JSONValue.parse(verified.stdout)
        #expect(event["source"]?.stringValue == "googleplay" && event["type"]?.stringValue == "SUBSCRIPTION_RENEWED")
        // Another audience's push does not verify for this configuration.
        let other = try CommandRunner.storerelay(
            ["simulate", "--store", "play", "--type", "TEST", "--audience", "https://elsewhere.example/play", "--config", "play.conf"],
            directory: directory)
        let refused = try CommandRunner.storerelay(
            ["verify", "--keys", "data/dev-play/certs.json", "--config", "play.conf", "-"], stdin: Array(other.stdout.utf8),
            directory: directory)
        #expect(refused.status == 1, "\(refused.stdout) \(refused.stderr)")
    }

    @Test func postsWithTheBearerTokenAndTheAudienceDefaultsToTheURL() throws {
        let directory = try Self.directory()
        let sink = try WebhookSink()
        let url = sink.url("/play/notifications")
        let result = try CommandRunner.storerelay(
            ["simulate", "--store", "play", "--type", "SUBSCRIPTION_RENEWED", "--url", url, "--config", "routes.conf"], directory: directory)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("HTTP 2"))
        let request = try #require(sink.requests(path: "/play/notifications").first)
        let authorization = try #require(request["headers"]?["authorization"]?.stringValue)
        let claims = try JSONValue.parse(try #require(Base64.urlDecode(authorization.dropFirst("Bearer ".count).split(separator: ".")[1])))
        #expect(claims["aud"]?.stringValue == url)
        #expect(claims["email"]?.stringValue == "storerelay-simulate@storerelay-dev.iam.gserviceaccount.com")
        let body = try JSONValue.parse(try #require(request["body"]?.stringValue))
        #expect(body["message"]?["data"] != nil && body["subscription"] != nil)
    }

    @Test func servesTheKeySetThatVerifiesItsPushes() throws {
        let directory = try Self.directory()
        let out = directory.appendingPathComponent("push.json")
        let saved = try CommandRunner.storerelay(
            ["simulate", "--store", "play", "--type", "SUBSCRIPTION_CANCELED", "--audience", "a", "--out", out.path, "--config", "routes.conf"],
            directory: directory)
        #expect(saved.status == 0, "\(saved.stderr)")
        let server = ChildProcess()
        server.executableURL = TestPaths.binary
        server.arguments = ["simulate", "--store", "play", "--serve-keys", "127.0.0.1:0", "--config", "routes.conf"]
        server.currentDirectoryURL = directory
        let output = Pipe()
        server.standardOutput = output
        server.standardError = FileHandle.nullDevice
        try server.run()
        defer { server.killAndWait() }
        var bytes: [UInt8] = []
        while let byte = output.fileHandleForReading.readData(ofLength: 1).first, byte != 0x0A { bytes.append(byte) }
        let line = String(decoding: bytes, as: UTF8.self)
        let url = try #require(line.split(separator: " ").last.map(String.init))
        #expect(url.hasPrefix("http://127.0.0.1:") && url.hasSuffix("/oauth2/v3/certs"))
        let fetched = try CommandRunner.run("curl", ["-sS", "-D", "-", url])
        #expect(fetched.status == 0, "\(fetched.stderr)")
        #expect(fetched.stdout.lowercased().contains("cache-control: public, max-age="))
        let document = try JSONValue.parse(String(try #require(fetched.stdout.components(separatedBy: "\r\n\r\n").last)))
        let key = try #require(document["keys"]?.arrayValue?.first)

        let (authorization, _) = try Self.saved(String(decoding: try Data(contentsOf: out), as: UTF8.self))
        let parts = authorization.dropFirst("Bearer ".count).split(separator: ".")
        let header = try JSONValue.parse(try #require(Base64.urlDecode(parts[0])))
        #expect(header["kid"] == key["kid"])
        let publicKey = try RSAPublicKey(modulus: try #require(key["n"]?.stringValue.flatMap { Base64.urlDecode($0) }),
                                         exponent: try #require(key["e"]?.stringValue.flatMap { Base64.urlDecode($0) }))
        #expect(publicKey.isValidRS256Signature(try #require(Base64.urlDecode(parts[2])), for: Array((parts[0] + "." + parts[1]).utf8)))
    }

    @Test func usageErrors() throws {
        let directory = try Self.directory()
        func run(_ arguments: [String]) throws -> CommandResult {
            try CommandRunner.storerelay(["simulate"] + arguments + ["--config", "routes.conf"], directory: directory)
        }
        let unknown = try run(["--store", "play", "--type", "DID_RENEW", "--audience", "a"])
        #expect(unknown.status == 2 && unknown.stderr.contains("unknown Google Play notification type"), "\(unknown.stderr)")
        let noAudience = try run(["--store", "play", "--type", "TEST"])
        #expect(noAudience.status == 2 && noAudience.stderr.contains("--audience"), "\(noAudience.stderr)")
        let store = try run(["--store", "amazon", "--type", "TEST"])
        #expect(store.status == 2 && store.stderr.contains("apple or play"), "\(store.stderr)")
        let product = try run(["--store", "play", "--type", "VOIDED_PURCHASE", "--audience", "a", "--product", "commitment"])
        #expect(product.status == 2 && product.stderr.contains("--product"), "\(product.stderr)")
        let list = try run(["--store", "play", "--list"])
        #expect(list.status == 0 && list.stdout.contains("SUBSCRIPTION_PURCHASED") && list.stdout.contains("VOIDED_PURCHASE"))
        let help = try CommandRunner.storerelay(["simulate", "--help"])
        #expect(help.stdout.contains("--store play") && help.stdout.contains("--serve-keys"))
        let apple = try run(["--store", "apple", "--type", "TEST", "--out", "-"])
        #expect(apple.status == 0 && apple.stdout.contains("signedPayload"), "\(apple.stderr)")
    }
}
