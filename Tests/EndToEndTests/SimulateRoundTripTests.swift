import Foundation
import Testing
import StoreRelayCore
import StoreRelayTestSupport

/// `storerelay simulate` signs every type and subtype Apple documents with a local dev CA;
/// a gateway that trusts that CA accepts each one and writes it to its file queue.
@Suite("Simulator round trip", .serialized)
struct SimulateRoundTripTests {
    @Test func everyTypeAndSubtypeRoundTripsThroughARunningGateway() throws {
        let directory = try TestPaths.makeTemporaryDirectory("storerelay-simulate")
        let config = directory.appendingPathComponent("routes.conf")
        let body = Gateway.bareConfig("""
            trust-root ./data/dev-ca/root.pem
            destination all file ./data/queues/all
            route * * * -> all
            """)
        try body.write(to: config, atomically: true, encoding: .utf8)

        // The dev CA does not exist before the first simulation, and nothing trusts it by default.
        let first = try CommandRunner.storerelay(["simulate", "--type", "TEST", "--out", "-", "--config", config.path],
                                                 directory: directory)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("data/dev-ca/root.pem").path))
        let plain = directory.appendingPathComponent("plain.conf")
        try Gateway.config().write(to: plain, atomically: true, encoding: .utf8)
        let untrusted = try CommandRunner.storerelay(["verify", "--config", plain.path, "-"], stdin: Array(first.stdout.utf8),
                                                     directory: directory)
        #expect(untrusted.status == 1, "a configuration without its trust-root must not trust the dev CA")
        #expect(untrusted.stderr.contains("signature"))

        let gateway = try Gateway(config: body, directory: directory)
        let listing = try CommandRunner.storerelay(["simulate", "--list"]).stdout
        var expected: [(type: String, subtype: String?)] = []
        for line in listing.split(separator: "\n") {
            let words = line.split(separator: " ").map(String.init)
            guard let type = words.first else { continue }
            for subtype in words.dropFirst() { expected.append((type, subtype == "(none)" ? nil : subtype)) }
        }
        #expect(expected.count >= 40)
        #expect(expected.contains { $0.type == "EXTERNAL_PURCHASE_TOKEN" } && expected.contains { $0.type == "RESCIND_CONSENT" })

        var ids: [String: (String, String?, String)] = [:]
        for (index, combination) in expected.enumerated() {
            let environment = index % 3 == 0 ? "production" : "sandbox"
            var arguments = ["simulate", "--type", combination.type, "--env", environment,
                             "--url", gateway.notificationURL, "--config", config.path]
            if let subtype = combination.subtype { arguments += ["--subtype", subtype] }
            let result = try CommandRunner.storerelay(arguments, directory: directory)
            #expect(result.status == 0, "\(combination): \(result.stdout) \(result.stderr)")
            #expect(result.stdout.contains("200"), "\(combination)")
            let answer = result.stdout.split(separator: "\n").compactMap { try? JSONValue.parse(String($0)) }.first
            #expect(answer?["status"]?.stringValue == "accepted", "\(combination): \(result.stdout)")
            if let id = answer?["id"]?.stringValue { ids[id] = (combination.type, combination.subtype, environment) }
        }

        let deadline = Date().addingTimeInterval(20)
        var events: [String: JSONValue] = [:]
        while Date() < deadline {
            events = [:]
            for line in gateway.fileQueueLines("data/queues/all") {
                if let event = try? JSONValue.parse(line), let id = event["id"]?.stringValue { events[id] = event }
            }
            if events.count >= ids.count { break }
            Thread.sleep(forTimeInterval: 0.05)
        }
        #expect(events.count == expected.count)
        for (id, (type, subtype, environment)) in ids {
            let event = try #require(events[id], "\(type)/\(subtype ?? "-") never reached the file queue")
            #expect(event["type"]?.stringValue == type)
            #expect(event["subtype"]?.stringValue == subtype)
            #expect(event["environment"]?.stringValue == environment, "\(type)/\(subtype ?? "-")")
            #expect(event["app"]?["bundleId"]?.stringValue == "com.acme.journal")
        }
        #expect(gateway.deadLetters.isEmpty)
    }
}
