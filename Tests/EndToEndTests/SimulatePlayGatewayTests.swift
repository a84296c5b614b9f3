import Foundation
import Testing
import StoreRelayCore
import StoreRelayTestSupport

/// `simulate --store play` against a real gateway, as README's "Trying it locally" runs it:
/// the dev key set served by `--serve-keys` is the gateway's `google-certs-url`, and every
/// notification type the simulator builds is verified, normalized under its name and
/// delivered; a push for another audience is refused.
@Suite("Simulator: Google Play against the gateway", .serialized, .timeLimit(.minutes(3)))
struct SimulatePlayGatewayTests {
    static let audience = "https://relay.acme.com/play"

    @Test func everySimulatedPushIsVerifiedAndDelivered() throws {
        let directory = try TestPaths.makeTemporaryDirectory("storerelay-simulate-play-gateway")
        try "data ./data\n".write(to: directory.appendingPathComponent("keys.conf"), atomically: true, encoding: .utf8)
        let keys = ChildProcess()
        keys.executableURL = TestPaths.binary
        keys.arguments = ["simulate", "--store", "play", "--serve-keys", "127.0.0.1:0", "--config", "keys.conf"]
        keys.currentDirectoryURL = directory
        let output = Pipe()
        keys.standardOutput = output
        keys.standardError = FileHandle.nullDevice
        try keys.run()
        defer { keys.killAndWait() }
        var line: [UInt8] = []
        while let byte = output.fileHandleForReading.readData(ofLength: 1).first, byte != 0x0A { line.append(byte) }
        let certsURL = try #require(String(decoding: line, as: UTF8.self).split(separator: " ").last.map(String.init))

        let gateway = try Gateway(config: Gateway.config("""
            google-certs-url \(certsURL)
            play com.acme.journal {
                push-audience \(Self.audience)
                push-account storerelay-simulate@storerelay-dev.iam.gserviceaccount.com
            }
            path /play/notifications play
            """), directory: directory)
        let url = gateway.baseURL + "/play/notifications"
        let list = try CommandRunner.storerelay(["simulate", "--store", "play", "--list", "--config", "routes.conf"], directory: directory)
        let types = list.stdout.split(separator: "\n").map(String.init)
        #expect(types.count > 15)
        for type in types {
            // The gateway fetches the key set at start: the first push may meet an empty set (503).
            var result = try simulate(type, url: url, directory: directory)
            if result.stdout.hasPrefix("HTTP 503") {
                _ = pollUntil(timeout: 10, interval: 0.2) {
                    result = (try? simulate(type, url: url, directory: directory)) ?? result
                    return !result.stdout.hasPrefix("HTTP 503")
                }
            }
            #expect(result.status == 0 && result.stdout.hasPrefix("HTTP 200"), "\(type): \(result.stdout) \(result.stderr)")
        }
        #expect(gateway.waitForFileQueue("data/queues/all") { $0.count >= types.count })
        let events = gateway.fileQueueLines("data/queues/all").compactMap { try? JSONValue.parse($0) }
        #expect(Set(events.compactMap { $0["type"]?.stringValue }) == Set(types))
        #expect(events.allSatisfy { $0["source"]?.stringValue == "googleplay" && $0["app"]?["bundleId"]?.stringValue == "com.acme.journal" })

        let stranger = try CommandRunner.storerelay(
            ["simulate", "--store", "play", "--type", "TEST", "--audience", "https://elsewhere.example/play", "--url", url,
             "--config", "routes.conf"], directory: directory)
        #expect(stranger.status == 1 && stranger.stdout.hasPrefix("HTTP 401"), "\(stranger.stdout) \(stranger.stderr)")
    }

    func simulate(_ type: String, url: String, directory: URL) throws -> CommandResult {
        try CommandRunner.storerelay(
            ["simulate", "--store", "play", "--type", type, "--audience", Self.audience, "--url", url, "--config", "routes.conf"],
            directory: directory)
    }
}
