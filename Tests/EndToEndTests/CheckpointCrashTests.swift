import Foundation
import StoreRelayCore
import StoreRelayGateway
import StoreRelayTestSupport
import Testing

/// Delivery checkpoints under `kill -9`: a start reads the checkpoint and the journal's tail,
/// and a crash in the middle of writing a checkpoint loses nothing.
@Suite("Checkpoint crashes", .serialized)
struct CheckpointCrashTests {
    /// A crash while a checkpoint is half written leaves the new one on disk as
    /// `delivery-checkpoint.tmp`, not yet renamed over the old one. The gateway is held at
    /// that moment (`GatewayTestHooks.checkpointPause`) and its data directory copied: the
    /// copy is what `kill -9` would leave behind (no power is lost, so every byte written is
    /// there). A gateway started on the copy resumes from the previous checkpoint and the
    /// tail after it, and delivers every acknowledged notification once the webhook is up.
    @Test func aKillDuringACheckpointWriteLosesNothing() throws {
        let authority = try TestCertificateAuthority()
        let signer = try NotificationSigner(authority: authority)
        let directory = try Gateway.directory(trusting: authority, "storerelay-checkpoint-crash")
        func config(_ url: String) -> String {
            Gateway.bareConfig("""
                trust-root ./test-root.pem
                \(webhookDestination("hook", url, options: "max-attempts 1000\nbackoff 100ms 300ms\nconcurrency 4"))
                route * * * -> hook
                """)
        }
        // Each checkpoint write pauses 1.5 s between writing the new file and renaming it.
        let first = try Gateway(config: config("http://127.0.0.1:1/down"), directory: directory,
                                hooks: GatewayTestHooks(checkpointPause: .milliseconds(1500)))
        var acknowledged: [String] = []
        for _ in 0..<30 {
            let uuid = UUID().uuidString.lowercased()
            let response = try first.post(json: try signer.body(uuid: uuid))
            #expect(response.status == 200)
            acknowledged.append(uuid)
        }
        let journal = directory.appendingPathComponent("data/journal")
        // A first checkpoint is in place; the next one is being written: "crash" now.
        #expect(pollUntil(timeout: 20) { FileManager.default.fileExists(atPath: journal.appendingPathComponent("delivery-checkpoint").path) })
        #expect(pollUntil(timeout: 20) { FileManager.default.fileExists(atPath: journal.appendingPathComponent("delivery-checkpoint.tmp").path) })
        let crashed = try Gateway.directory(trusting: authority, "storerelay-checkpoint-crashed")
        try FileManager.default.copyItem(at: directory.appendingPathComponent("data"), to: crashed.appendingPathComponent("data"))
        first.process.send(SIGTERM)
        #expect(first.process.waitForExit() == 0)
        let writing = crashed.appendingPathComponent("data/journal/delivery-checkpoint.tmp")
        #expect(FileManager.default.fileExists(atPath: writing.path), "copied in the middle of the write")

        let sink = try WebhookSink(secret: testSigningSecret)
        let second = try Gateway(config: config(sink.url("/ok")), directory: crashed)
        #expect(try Curl.get(second.baseURL + "/readyz").status == 200)
        #expect(pollUntil(timeout: 30) {
            Set(sink.requests.compactMap { $0["headers"]?["webhook-id"]?.stringValue }).isSuperset(of: acknowledged)
        }, "every acknowledged notification is delivered after the restart")
        // The next checkpoint replaced the leftover of the interrupted write.
        #expect(pollUntil(timeout: 10) { !FileManager.default.fileExists(atPath: writing.path) })
    }
}
