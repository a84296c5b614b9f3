import Foundation
import Testing
import StoreRelayCore
import StoreRelayTestSupport

/// What was acknowledged survives `kill -9`, and stays a duplicate after restart.
@Suite("Crash recovery end to end", .serialized)
struct CrashRecoveryTests {
    @Test func acknowledgedNotificationSurvivesKillNine() throws {
        guard let jws = Vectors.realNotification("11_sandbox_SUBSCRIBED_RESUBSCRIBE") else {
            print(TestPaths.vectorsMissing); return
        }
        let first = try Gateway()
        let accepted = try first.post(signedPayload: jws)
        #expect(accepted.json?["status"]?.stringValue == "accepted")
        first.process.send(SIGKILL)
        #expect(first.process.waitForExit() != nil)

        let second = try Gateway(config: Gateway.config(), directory: first.directory)
        #expect(second.journalContains("9f9730f8-f3df-436a-b7e5-e85ef9c6afe4"))
        let retried = try second.post(signedPayload: jws)
        #expect(retried.status == 200)
        #expect(retried.json?["status"]?.stringValue == "duplicate")
    }

    /// Concurrent clients, SIGKILL in the middle: every notification answered 200 is in the
    /// journal after restart, and a torn tail does not stop the gateway from starting.
    @Test func concurrentAcknowledgementsSurviveKillNine() throws {
        let files = Vectors.files(in: "real/v2-notifications").filter { !$0.contains("/01_") }
        guard !files.isEmpty else { print(TestPaths.vectorsMissing); return }
        let gateway = try Gateway()
        let acknowledged = Locked<[String]>([])
        DispatchQueue.concurrentPerform(iterations: files.count) { index in
            guard let jws = Vectors.text(files[index]),
                  let response = try? gateway.post(signedPayload: jws),
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
        let restarted = try Gateway(config: Gateway.config(), directory: gateway.directory)
        #expect(acknowledged.current.count == files.count)
        for id in acknowledged.current {
            #expect(restarted.journalContains(id), "\(id) lost")
        }
        for file in files {
            let response = try restarted.post(signedPayload: try #require(Vectors.text(file)))
            #expect(response.json?["status"]?.stringValue == "duplicate", "\(file)")
        }
    }
}
