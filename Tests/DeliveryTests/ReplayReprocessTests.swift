import Foundation
import Testing
@testable import StoreRelayDelivery
import StoreRelayConfig
import StoreRelayStorage
import StoreRelayCore
import StoreRelayTestSupport

/// A notification Apple signed that an older build could not read is kept as a quarantined
/// dead letter; its replay reads Apple's body again with the running build (the engine's
/// `reprocess`), and delivers it once that build reads it.
@Suite struct ReplayReprocessTests {
    @Test func aReplayReadsTheBodyAgainAndDeliversItOnceItReads() throws {
        let directory = try TestPaths.makeTemporaryDirectory("storerelay-reprocess")
        let journal = try Journal.open(directory: directory.appendingPathComponent("journal").path, logger: .disabled)
        defer { journal.close() }
        let deadLetters = try DeadLetterStore.open(directory: directory.appendingPathComponent("dead-letters").path, logger: .disabled)
        let queueDirectory = directory.appendingPathComponent("queue").path
        let configuration = try GatewayConfiguration.parse(text: """
            data \(directory.path)
            destination all file \(queueDirectory)
            route * * * -> all
            """)
        let engine = try DeliveryEngine(configuration: configuration, journal: journal, deadLetters: deadLetters, logger: .disabled)
        defer {
            let done = DispatchSemaphore(value: 0)
            engine.stop { done.signal() }
            done.wait()
        }
        var unread = try sampleNotification(destinations: [])
        let why = Disposition.notUnderstoodPrefix + "the notification names an unknown environment \"Staging\""
        unread.disposition = .quarantine(reason: why)
        // As the engine writes it: the quarantine reason is the letter's detail.
        let letter = DeadLetter(notification: unread, destination: nil, reason: .quarantined, detail: why, attempts: [],
                                createdAt: .now())
        let written = DispatchSemaphore(value: 0)
        deadLetters.write(letter) { _ in written.signal() }
        written.wait()

        // No reprocessing, or a build that still cannot read it: refused, nothing sent.
        #expect(engine.replay(deadLetterId: letter.id) == .notUnderstood)
        engine.reprocess.withLock { $0 = { stored in stored } }
        #expect(engine.replay(deadLetterId: letter.id) == .notUnderstood)

        // A build that reads it: routed now, and delivered.
        engine.reprocess.withLock { $0 = { stored in
            var read = stored
            read.disposition = .accept
            return read
        } }
        #expect(engine.replay(deadLetterId: letter.id) == .replayed(destinations: ["all"]))
        #expect(pollUntil(timeout: 20, interval: 0.05) {
            ((try? FileManager.default.contentsOfDirectory(atPath: queueDirectory)) ?? []).contains { name in
                (try? String(contentsOfFile: queueDirectory + "/" + name, encoding: .utf8))?.contains(unread.id) == true
            }
        })
    }
}
