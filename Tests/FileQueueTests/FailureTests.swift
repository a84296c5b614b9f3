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
/// segments redirected to /dev/full give genuine ENOSPC from `write`.
@Suite struct FailureTests {
    @Test func diskFullFailsTheAppendAndReportsNothingDelivered() async throws {
        try #require(fileExists("/dev/full"), "needs /dev/full")
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let sink = MemorySink()
        let queue = try openQueue(dir.queue, sink: sink)
        // Segments are created on the first line: the first one will be sequence 1.
        let full = segment(dir.queue, 1, ".jsonl.open")
        queue.redirectNewSegmentsForTesting(to: "/dev/full")

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
        queue.redirectNewSegmentsForTesting(to: nil)
        try await queue.append("{\"id\":\"stored\"}")
        #expect(queue.isWritable)
        #expect(queue.openSequence == 2)
        try await queue.close()
        #expect(readText(segment(dir.queue, 2, ".jsonl")) == "{\"id\":\"stored\"}\n")
        #expect(sink.lines.contains { $0.contains("batch failed") })

        // At the next start nothing lost is published, and sequences continue after it.
        let reopened = try openQueue(dir.queue)
        #expect(reopened.recovery.closedSegments.isEmpty)
        #expect(reopened.recovery.lastSequence == 2)
        try await reopened.close()
    }

    /// Links planted where the queue writes (the directory is shared with consumers) are
    /// never written through: not as the next segment (an empty file behind it would have
    /// received the lines), not as the sequence file's temporary (the file behind it would
    /// have been truncated). The batch fails with EEXIST; the next takes the next sequence.
    @Test func linksPlantedInTheQueueDirectoryAreNeverWrittenThrough() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let empty = dir.path + "/empty.txt", precious = dir.path + "/precious.txt"
        try writeText(empty, "")
        try writeText(precious, "precious\n")
        let queue = try openQueue(dir.queue)
        try FileManager.default.createSymbolicLink(atPath: segment(dir.queue, 1, ".jsonl.open"), withDestinationPath: empty)
        try FileManager.default.createSymbolicLink(atPath: dir.queue + "/.sequence.tmp", withDestinationPath: precious)

        guard case .failure(let error) = await queue.outcome("{\"id\":\"first\"}") else {
            Issue.record("an append through a planted link was reported delivered")
            return
        }
        #expect(error.errno == EEXIST)
        #expect(error.operation == "open")
        try await queue.append("{\"id\":\"second\"}")
        #expect(queue.openSequence == 2)
        try await queue.close()
        #expect(readText(empty) == "")
        #expect(readText(precious) == "precious\n")
        #expect(readText(segment(dir.queue, 2, ".jsonl")) == "{\"id\":\"second\"}\n")

        // A restart leaves the link alone (it is no segment of ours) and goes on after it.
        let reopened = try openQueue(dir.queue)
        #expect(reopened.recovery.lastSequence == 2)
        try await reopened.append("{\"id\":\"third\"}")
        try await reopened.close()
        #expect(readText(empty) == "")
        #expect(readText(segment(dir.queue, 3, ".jsonl")) == "{\"id\":\"third\"}\n")
    }

    /// A consumer who plants a link named as a closed segment must not get the gateway to
    /// read what it points to and publish it compressed (a key, the admin token).
    @Test func compressionNeverReadsThroughALink() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let secret = dir.path + "/admin.token"
        try writeText(secret, "s3cret-admin-token\n")
        try FileManager.default.createDirectory(atPath: dir.queue, withIntermediateDirectories: true)
        let planted = segment(dir.queue, 99, ".jsonl")
        try FileManager.default.createSymbolicLink(atPath: planted, withDestinationPath: secret)
        let sink = MemorySink()
        let queue = try openQueue(dir.queue, testOptions(compression: .gzip), sink: sink)
        try await queue.close()  // waits for the compression recovery asked for
        #expect(!fileExists(segment(dir.queue, 99, ".jsonl.gz")), "the link's target was published compressed")
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: planted)) == secret, "the link was touched")
        #expect(readText(secret) == "s3cret-admin-token\n")
        #expect(sink.lines.contains { $0.contains("not a regular file") })
    }

    /// A name or `.sequence` near `UInt64.max` is nobody's segment of ours: counting on from
    /// it would overflow and stop the gateway at every start.
    @Test func absurdSequencesAreIgnored() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        try FileManager.default.createDirectory(atPath: dir.queue, withIntermediateDirectories: true)
        try writeText(dir.queue + "/18446744073709551615.jsonl", "planted\n")
        try writeText(dir.queue + "/.sequence", "18446744073709551615\n")
        let queue = try openQueue(dir.queue)
        try await queue.append("{\"id\":\"fine\"}")
        #expect(queue.openSequence == 1)
        try await queue.close()
        #expect(readText(segment(dir.queue, 1, ".jsonl")) == "{\"id\":\"fine\"}\n")
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
