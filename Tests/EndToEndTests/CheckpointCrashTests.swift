import Foundation
import Testing
import StoreRelayCore
import StoreRelayTestSupport

/// Delivery checkpoints under `kill -9`: a start reads the checkpoint and the journal's tail,
/// and a crash in the middle of writing a checkpoint loses nothing.
@Suite("Checkpoint crashes", .serialized)
struct CheckpointCrashTests {
    /// The gateway is killed while a checkpoint is half written (the new one on disk as
    /// `delivery-checkpoint.tmp`, not yet renamed over the old one): the restart resumes from
    /// the previous checkpoint and the tail after it, and every acknowledged notification is
    /// delivered once the webhook is up.
    @Test func aKillDuringACheckpointWriteLosesNothing() throws {
        let authority = try TestCertificateAuthority()
        let signer = try NotificationSigner(authority: authority)
        let directory = try Gateway.directory(trusting: authority, "storerelay-checkpoint-crash")
        let port = freeLoopbackPort()
        func config(_ url: String) -> String {
            Gateway.bareConfig("""
                trust-root ./test-root.pem
                \(webhookDestination("hook", url, options: "max-attempts 1000\nbackoff 100ms 300ms\nconcurrency 4"))
                route * * * -> hook
                """, listen: "127.0.0.1:\(port)")
        }
        // Each checkpoint write pauses 1.5 s between writing the new file and renaming it.
        let first = try Gateway(config: config("http://127.0.0.1:1/down"), directory: directory,
                                environment: ["STORERELAY_TEST_CHECKPOINT_PAUSE_MS": "1500"], host: .childProcess)
        var acknowledged: [String] = []
        for _ in 0..<30 {
            let uuid = UUID().uuidString.lowercased()
            let response = try first.post(json: try signer.body(uuid: uuid))
            #expect(response.status == 200)
            acknowledged.append(uuid)
        }
        let journal = directory.appendingPathComponent("data/journal")
        let saved = journal.appendingPathComponent("delivery-checkpoint")
        let writing = journal.appendingPathComponent("delivery-checkpoint.tmp")
        // A first checkpoint is in place; the next one is being written: kill now.
        #expect(pollUntil(timeout: 20) { FileManager.default.fileExists(atPath: saved.path) })
        #expect(pollUntil(timeout: 20) { FileManager.default.fileExists(atPath: writing.path) })
        first.process.send(SIGKILL)
        _ = first.process.waitForExit()
        #expect(FileManager.default.fileExists(atPath: writing.path), "killed in the middle of the write")

        let sink = try WebhookSink(secret: testSigningSecret)
        let second = try Gateway(config: config(sink.url("/ok")), directory: directory)
        #expect(try Curl.get(second.baseURL + "/readyz").status == 200)
        #expect(pollUntil(timeout: 30) {
            Set(sink.requests.compactMap { $0["headers"]?["webhook-id"]?.stringValue }).isSuperset(of: acknowledged)
        }, "every acknowledged notification is delivered after the restart")
        // The next checkpoint replaced the leftover of the interrupted write.
        #expect(pollUntil(timeout: 10) { !FileManager.default.fileExists(atPath: writing.path) })
    }
}
