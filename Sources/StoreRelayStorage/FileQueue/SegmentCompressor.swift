#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Turns a closed `<seq>.jsonl` into `<seq>.jsonl.gz` so that a consumer only ever sees
/// complete files: deflate into `<seq>.jsonl.gz.tmp`, fsync, rename, fsync the directory,
/// and only then remove the uncompressed segment (and fsync the directory again).
///
/// A crash at any point leaves either the complete `.jsonl`, or the complete `.jsonl.gz`
/// (perhaps beside the `.jsonl`, which recovery then removes), plus at most a `.tmp` that
/// recovery deletes. Runs on the queue's compression queue only.
struct SegmentCompressor: Sendable {
    let directory: String
    let level: Int32

    /// What one compression did.
    enum Outcome: Sendable, Equatable {
        case compressed
        /// The closed segment was already gone: a consumer read and deleted it first.
        case alreadyTaken
        /// Something other than a regular file holds the segment's name (a link a consumer
        /// planted, say): never read through it, never publish what it points to.
        case notOurs
    }

    func compress(_ sequence: UInt64) throws(StorageError) -> Outcome {
        let source = QueueSegmentName(sequence, .closed).path(in: directory)
        let temporary = QueueSegmentName(sequence, .compressing).path(in: directory)
        let target = QueueSegmentName(sequence, .compressed).path(in: directory)
        let input: Int32
        do {
            input = try QueueFiles.openFile(source, O_RDONLY | O_NOFOLLOW | O_NONBLOCK)
        } catch where error.errno == ENOENT {
            return .alreadyTaken
        } catch where error.errno == ELOOP {
            return .notOurs
        }
        defer { close(input) }
        guard try QueueFiles.status(input, path: source).isRegular else { return .notOurs }
        // A leftover (or planted) `.gz.tmp` is removed, never written through.
        try QueueFiles.removeFile(temporary)
        let output = try QueueFiles.openFile(temporary, O_WRONLY | O_CREAT | O_EXCL)
        do throws(StorageError) {
            defer { close(output) }
            try deflate(from: input, path: source, to: output, path: temporary)
            try QueueFiles.syncFile(output, path: temporary)
        } catch {
            try? QueueFiles.removeFile(temporary)
            throw error
        }
        try QueueFiles.renameFile(temporary, target)
        try QueueFiles.syncDirectory(directory)
        try QueueFiles.removeFile(source)
        try QueueFiles.syncDirectory(directory)
        return .compressed
    }

    private func deflate(from input: Int32, path inputPath: String, to output: Int32, path outputPath: String) throws(StorageError) {
        let deflater = try GzipDeflater(level: level)
        var buffer = [UInt8](repeating: 0, count: 256 * 1024)
        var readOffset = 0
        var writeOffset = 0
        let sink = { (bytes: UnsafeRawBufferPointer) throws(StorageError) in
            try QueueFiles.writeAll(output, bytes, at: writeOffset, path: outputPath)
            writeOffset += bytes.count
        }
        while true {
            let count = try buffer.withMutableBytes { (raw) throws(StorageError) in
                try QueueFiles.read(input, into: raw, at: readOffset, path: inputPath)
            }
            readOffset += count
            let finish = count < buffer.count
            try buffer.withBytes { (raw) throws(StorageError) in
                try deflater.deflate(UnsafeRawBufferPointer(rebasing: raw[0..<count]), finish: finish, output: sink)
            }
            if finish { return }
        }
    }
}
