import Foundation
import Testing
import StoreRelayCore
import StoreRelayTestSupport

/// `storerelay verify` with a saved Google Play push: body and Authorization, keys from a
/// file or fetched from `google-certs-url`, as of now or `--at`.
@Suite("storerelay verify for Google Play pushes", .serialized)
struct PlayVerifyCommandTests {
    let signer: PlayPushSigner
    let directory: URL
    let config: String
    let keysFile: String
    let keys: PlayKeySetServer

    init() throws {
        signer = try PlayPushSigner(kids: ["key-1", "rogue"])
        keys = try PlayKeySetServer(document: try signer.keySetDocument(["key-1"]))
        directory = try TestPaths.makeTemporaryDirectory("storerelay-play-verify")
        config = directory.appendingPathComponent("routes.conf").path
        try Gateway.bareConfig("""
            path /play/notifications play
            play com.acme.journal {
                push-audience \(PlayPushSigner.audience)
                push-account \(PlayPushSigner.account)
            }
            \(keys.configLine)
            """).write(toFile: config, atomically: true, encoding: .utf8)
        keysFile = directory.appendingPathComponent("certs.json").path
        try signer.keySetDocument(["key-1"]).write(toFile: keysFile, atomically: true, encoding: .utf8)
    }

    func save(_ name: String, _ text: String) throws -> String {
        let path = directory.appendingPathComponent(name).path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    let body = PlayPushSigner.body(messageId: "7001", data: PlayPushSigner.subscriptionNotification(type: 4))

    @Test func verifiesASavedPushAndPrintsItsEvent() throws {
        let file = try save("push.json", body)
        let token = try signer.validToken()
        let result = try CommandRunner.storerelay(["verify", "--config", config, "--authorization", "Bearer \(token)", "--keys", keysFile, file],
                                                  directory: directory)
        #expect(result.status == 0, "\(result.stderr)")
        let event = try JSONValue.parse(result.stdout)
        #expect(event["source"] == "googleplay")
        #expect(event["id"] == "7001")
        #expect(event["type"] == "SUBSCRIPTION_PURCHASED")

        // Saved as an HTTP request, keys fetched from google-certs-url.
        let http = try save("push.http", "POST /play/notifications HTTP/1.1\r\nHost: relay\r\nAuthorization: Bearer \(token)\r\n"
            + "Content-Type: application/json\r\n\r\n" + body)
        let fetched = try CommandRunner.storerelay(["verify", "--config", config, http], directory: directory)
        #expect(fetched.status == 0, "\(fetched.stderr)")
        #expect(try JSONValue.parse(fetched.stdout)["id"] == "7001")
        #expect(keys.fetchCount >= 1)

        // An undeclared package verifies, and says it would be quarantined.
        let other = try save("other.json", PlayPushSigner.body(messageId: "7002", data: PlayPushSigner.subscriptionNotification(type: 4, package: "com.other.app")))
        let quarantined = try CommandRunner.storerelay(["verify", "--config", config, "--authorization", "Bearer \(token)", "--keys", keysFile, other],
                                                       directory: directory)
        #expect(quarantined.status == 0)
        #expect(quarantined.stderr.contains("would quarantine it"))
    }

    @Test func refusesWhatTheGatewayWouldRefuse() throws {
        let file = try save("push.json", body)
        let now = Timestamp.now().seconds
        // A push saved two hours ago: expired now, valid as of when it came.
        var old = PlayPushSigner.claims(now: now - 7200)
        old[4] = ("exp", .integer(now - 3600))
        let expired = try signer.token(claims: old)
        let late = try CommandRunner.storerelay(["verify", "--config", config, "--authorization", "Bearer \(expired)", "--keys", keysFile, file],
                                                directory: directory)
        #expect(late.status == 1)
        #expect(late.stderr.contains("expired"))
        let then = Timestamp(seconds: now - 7000).iso8601
        let onTime = try CommandRunner.storerelay(["verify", "--config", config, "--authorization", "Bearer \(expired)", "--keys", keysFile,
                                                   "--at", then, file], directory: directory)
        #expect(onTime.status == 0, "\(onTime.stderr)")

        let forged = try signer.token(kid: "key-1", claims: PlayPushSigner.claims(now: now), signWith: "rogue")
        let refused = try CommandRunner.storerelay(["verify", "--config", config, "--authorization", "Bearer \(forged)", "--keys", keysFile, file],
                                                   directory: directory)
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("signature"))
        #expect(refused.stdout.isEmpty)

        let bare = try CommandRunner.storerelay(["verify", "--config", config, file], directory: directory)
        #expect(bare.status == 1)
        #expect(bare.stderr.contains("Authorization"))
        let badTime = try CommandRunner.storerelay(["verify", "--config", config, "--at", "yesterday", file], directory: directory)
        #expect(badTime.status == 2)
    }
}
