#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Testing
import StoreRelayStorage
import StoreRelayCore

/// Real failures from real system calls. Tests run as root, so permissions stop nothing:
/// a symlink to /dev/full gives genuine ENOSPC from `write`.
@Suite struct FailureTests {
    @Test func diskFullFailsTheAppendAndReportsNothingDelivered() async throws {
        try #require(fileExists("/dev/full"), "needs /dev/full")
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let sink = MemorySink()
        let queue = try openQueue(dir.queue, sink: sink)
        // Segments are created on the first line: the first one will be sequence 1.
        let full = segment(dir.queue, 1, ".jsonl.open")
        try FileManager.default.createSymbolicLink(atPath: full, withDestinationPath: "/dev/full")

        guard case .failure(let error) = await queue.outcome("{\"id\":\"lost\"}") else {
            Issue.record("an append to a full disk was reported delivered")
            return
        }
        #expect(error.code == .io)
        #expect(error.errno == ENOSPC)
        #expect(error.operation == "write")
        #expect(error.path == full)
        #expect(error.message.contains("No space left on device"))
        #expect(!queue.isWritable)
        #expect(queue.stats.lines == 0)
        #expect(queue.stats.failures == 1)

        // The damaged segment is abandoned; the next batch starts a fresh one.
        try await queue.append("{\"id\":\"stored\"}")
        #expect(queue.isWritable)
        #expect(queue.openSequence == 2)
        try await queue.close()
        #expect(readText(segment(dir.queue, 2, ".jsonl")) == "{\"id\":\"stored\"}\n")
        #expect(sink.lines.contains { $0.contains("batch failed") })

        // At the next start the device behind the symlink is left alone, not truncated or
        // published, and sequences still continue after it.
        let reopened = try openQueue(dir.queue)
        #expect(reopened.recovery.closedSegments.isEmpty)
        #expect(reopened.recovery.lastSequence == 2)
        try await reopened.close()
    }

    @Test func aDirectoryThatCannotExistFailsToOpenWithItsPath() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let file = dir.path + "/not-a-directory"
        try writeText(file, "x")
        do {
            _ = try openQueue(file + "/queue")
            Issue.record("opened a queue under a regular file")
        } catch {
            #expect(error.code == .io)
            #expect(error.errno == ENOTDIR)
            #expect(error.path?.hasPrefix(file) == true)
        }
        do {
            _ = try openQueue(file)
            Issue.record("opened a queue on a regular file")
        } catch {
            #expect(error.errno == ENOTDIR)
        }
    }

    @Test func aVanishedDirectoryFailsAppendsWithTheErrno() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let queue = try openQueue(dir.queue)
        try FileManager.default.removeItem(atPath: dir.queue)
        guard case .failure(let error) = await queue.outcome("nowhere") else {
            Issue.record("an append into a removed directory succeeded")
            return
        }
        #expect(error.code == .io)
        #expect(error.errno == ENOENT)
        #expect(queue.stats.lines == 0)
        try await queue.close()
    }
}
