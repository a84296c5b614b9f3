import Foundation
import Testing
import StoreRelayCore
import StoreRelayTestSupport

/// What was acknowledged survives `kill -9`, reaches its destination after the restart, and
/// stays a duplicate. The notifications are signed by the test CA, so this runs in every clone.
@Suite("Crash recovery end to end", .serialized)
struct CrashRecoveryTests {
    @Test func acknowledgedNotificationSurvivesKillNine() throws {
        let uuid = UUID().uuidString.lowercased()
        let body = try testSigner.body(uuid: uuid, type: "SUBSCRIBED", subtype: "RESUBSCRIBE")
        let first = try Gateway(config: Gateway.trustingConfig(), directory: Gateway.trustingDirectory(), host: .childProcess)
        let accepted = try first.post(json: body)
        #expect(accepted.json?["status"]?.stringValue == "accepted")
        first.process.send(SIGKILL)
        #expect(first.process.waitForExit() != nil)

        let second = try Gateway(config: Gateway.trustingConfig(), directory: first.directory)
        #expect(second.journalContains(uuid))
        let retried = try second.post(json: body)
        #expect(retried.status == 200)
        #expect(retried.json?["status"]?.stringValue == "duplicate")
        #expect(second.waitForFileQueue("data/queues/all") { lines in lines.contains { $0.contains(uuid) } },
                "\(uuid) was acknowledged but never delivered")
    }

    /// Concurrent clients, SIGKILL in the middle: every notification answered 200 is in the
    /// journal after restart and reaches the file queue, and a torn tail does not stop the
    /// gateway from starting.
    @Test func concurrentAcknowledgementsSurviveKillNine() throws {
        let bodies = try (0..<24).map { index in
            try testSigner.body(uuid: UUID().uuidString.lowercased(), type: index % 2 == 0 ? "DID_RENEW" : "SUBSCRIBED",
                                subtype: index % 2 == 0 ? nil : "RESUBSCRIBE")
        }
        let gateway = try Gateway(config: Gateway.trustingConfig(), directory: Gateway.trustingDirectory(), host: .childProcess)
        let acknowledged = Locked<[String]>([])
        DispatchQueue.concurrentPerform(iterations: bodies.count) { index in
            guard let response = try? gateway.post(json: bodies[index]),
                  response.status == 200, let id = response.json?["id"]?.stringValue else { return }
            acknowledged.withLock { $0.append(id) }
        }
        gateway.process.send(SIGKILL)
        _ = gateway.process.waitForExit()
        // Simulate a record torn by the crash: a partial frame at the end of the last segment.
        if let last = gateway.journalSegments.last, let handle = try? FileHandle(forWritingTo: last) {
            handle.seekToEndOfFile()
            handle.write(Data([0x40, 0x00, 0x00, 0x00, 0xde, 0xad]))
            try? handle.close()
        }
        let restarted = try Gateway(config: Gateway.trustingConfig(), directory: gateway.directory)
        #expect(acknowledged.current.count == bodies.count)
        for id in acknowledged.current {
            #expect(restarted.journalContains(id), "\(id) lost")
        }
        for body in bodies {
            let response = try restarted.post(json: body)
            #expect(response.json?["status"]?.stringValue == "duplicate", "\(response.body)")
        }
        let delivered = restarted.waitForFileQueue("data/queues/all") { lines in
            acknowledged.current.allSatisfy { id in lines.contains { $0.contains(id) } }
        }
        #expect(delivered, "acknowledged but never delivered: \(acknowledged.current.filter { id in !restarted.fileQueueLines("data/queues/all").contains { $0.contains(id) } })")
    }
}
