import Foundation
import StoreRelayConfig
import StoreRelayCore
import StoreRelayDelivery
@testable import StoreRelayGateway
import StoreRelayTestSupport
import Testing

/// The watches and batching behind the operational events, on injected time, sending to a
/// real file destination (its `operational/` directory), whose lines are read back.
@Suite(.serialized) struct OperationalWatchTests {
    let clock = ManualClock()
    let directory: URL
    let events: OperationalEvents

    init() throws {
        directory = try TestPaths.makeTemporaryDirectory("storerelay-ops-watch")
        let configuration = try GatewayConfiguration.parse(
            text: "destination audit file \(directory.path)/ops\noperational-events -> audit\n", fileName: "routes.conf", environment: [:])
        events = OperationalEvents(clock: clock, batchWindow: .seconds(3600))
        events.attach(try OperationalEventQueue(try #require(configuration.destinations.first), clock: clock, logger: .disabled))
    }

    /// What the destination has written, parsed.
    private func written(count: Int) -> [JSONValue] {
        var found: [JSONValue] = []
        _ = pollUntil(timeout: 10) {
            let dir = directory.appendingPathComponent("ops/operational")
            let names = ((try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []).filter { $0.contains(".jsonl") }.sorted()
            found = names.flatMap { name in
                ((try? String(contentsOfFile: dir.appendingPathComponent(name).path, encoding: .utf8)) ?? "")
                    .split(separator: "\n").compactMap { try? JSONValue.parse(String($0)) }
            }
            return found.count >= count
        }
        return found
    }

    @Test func silenceIsToldOnceAndResumptionOnce() throws {
        let watch = IntakeSilenceWatch(clock: clock, events: events)
        watch.start(silence: .seconds(60), interval: .seconds(3600))
        defer { watch.stop() }
        watch.received(app: "com.acme.journal", environment: "production")
        clock.advance(by: .seconds(59))
        watch.check()
        clock.advance(by: .seconds(1))
        watch.check()
        clock.advance(by: .seconds(600))
        watch.check()
        watch.received(app: "com.acme.journal", environment: "production")
        watch.received(app: "com.acme.journal", environment: "production")
        let lines = written(count: 2)
        #expect(lines.map { $0["type"]?.stringValue } == ["intake.silent", "intake.resumed"])
        #expect(lines.first?["lastReceivedAt"]?.stringValue == Timestamp(milliseconds: 1_800_000_000_000).iso8601)
        #expect(lines.first?["silenceSeconds"]?.int64Value == 60)
        #expect(lines.last?["silentSince"]?.stringValue == Timestamp(milliseconds: 1_800_000_000_000).iso8601)
        #expect(watch.lastReceived.map(\.1) == [clock.now()])
    }

    /// A pair never heard from is not silent: the gateway cannot tell it from an app that
    /// sends elsewhere.
    @Test func aPairNeverHeardFromIsNotWatched() throws {
        let watch = IntakeSilenceWatch(clock: clock, events: events)
        watch.start(silence: .seconds(60), interval: .seconds(3600))
        defer { watch.stop() }
        clock.advance(by: .seconds(86_400))
        watch.check()
        events.emit("marker", [])
        #expect(written(count: 1).map { $0["type"]?.stringValue } == ["marker"])
    }

    /// Dead letters are counted per destination with their reasons and sent as one event
    /// each at the flush; one about the operational destination itself is not sent.
    @Test func deadLettersAreCountedPerDestination() throws {
        for _ in 0..<3 { events.deadLettered(destination: "billing", reason: .exhausted) }
        events.deadLettered(destination: "billing", reason: .rejected)
        events.deadLettered(destination: "audit", reason: .exhausted)
        events.deadLettered(destination: nil, reason: .unrouted)
        events.deadLetters.flush()
        events.deadLetters.flush()  // nothing new: nothing sent
        let lines = written(count: 2)
        #expect(lines.count == 2)
        let billing = try #require(lines.first { $0["destination"]?.stringValue == "billing" })
        #expect(billing["count"]?.int64Value == 4)
        #expect(billing["reasons"] == .object(JSONObject([("exhausted", 3), ("rejected", 1)])))
        let unrouted = try #require(lines.first { $0["destination"] == .null })
        #expect(unrouted["reasons"]?["unrouted"]?.int64Value == 1)
        #expect(!lines.contains { $0["destination"]?.stringValue == "audit" })
    }

    /// The threshold crossed is told once; again only after the space came back.
    @Test func diskLowIsToldOncePerCrossing() throws {
        let watch = DiskSpaceWatch(path: directory.path, threshold: Int.max, events: events)
        watch.check()
        watch.check()
        watch.setThreshold(0)
        watch.check()
        watch.setThreshold(Int.max)
        watch.check()
        let lines = written(count: 2)
        #expect(lines.count == 2 && lines.allSatisfy { $0["type"]?.stringValue == "disk.low" })
        #expect(lines.first?["path"]?.stringValue == directory.path)
        #expect((lines.first?["freeBytes"]?.int64Value ?? -1) >= 0)
        #expect(watch.freeBytes != nil)
    }
}
