import Foundation
import Testing
@testable import StoreRelayDelivery
import StoreRelayConfig
import StoreRelayNet
import StoreRelayStorage
import StoreRelayCore

/// Delivery's failures are `DeliveryError`s that keep what the operator needs: the code to
/// compare, the destination, and the call, file and errno behind it.
@Suite struct DeliveryErrorTests {
    /// A regular file where a directory is wanted: every `mkdir` under it fails with ENOTDIR.
    private func blockedPath() throws -> String {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("storerelay-blocked-\(UUID().uuidString)").path
        #expect(FileManager.default.createFile(atPath: file, contents: Data("x".utf8)))
        return file
    }

    @Test func aDeadLetterDirectoryThatCannotBeMadeIsAnIOError() throws {
        let blocked = try blockedPath()
        defer { try? FileManager.default.removeItem(atPath: blocked) }
        let error = #expect(throws: DeliveryError.self) { try DeadLetterStore.open(directory: blocked + "/dead-letters", logger: .disabled) }
        #expect(error?.code == .io && error?.errno == ENOTDIR && error?.path?.hasPrefix(blocked) == true)
        #expect(error?.destination == nil && error?.description == error?.message)
    }

    @Test func aFileQueueThatCannotBeOpenedNamesItsDestination() throws {
        let blocked = try blockedPath()
        defer { try? FileManager.default.removeItem(atPath: blocked) }
        let definition = DestinationConfiguration(name: "archive", kind: .file(StoreRelayConfig.FileQueueOptions(directory: blocked + "/queue")))
        let error = #expect(throws: DeliveryError.self) {
            _ = try DestinationSetup(definition, client: HTTPClient(), clock: WallClock(), logger: .disabled)
        }
        #expect(error?.code == .destination && error?.destination == "archive")
        #expect(error?.storage?.code == .io && error?.message == error?.storage?.message)
    }

    @Test func aReplayRecordDirectoryThatCannotBeMadeIsAnIOError() throws {
        let blocked = try blockedPath()
        defer { try? FileManager.default.removeItem(atPath: blocked) }
        let error = #expect(throws: DeliveryError.self) { _ = try ReplayIntentStore(directory: blocked + "/replays", logger: .disabled) }
        #expect(error?.code == .io && error?.operation != nil)
    }
}
