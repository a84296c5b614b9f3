import Dispatch

/// Fault-injection seams for the package's own tests. They use the real code paths and real
/// system calls; they only choose where the writer's bytes go and when the writer runs.
extension Journal {
    /// Test seam: batch bytes go to `path` (for example `/dev/full`, where every write fails
    /// with ENOSPC) instead of the segment, through the same system calls; nil restores.
    package func redirectWritesForTesting(to path: String?) throws(StorageError) {
        let result: Result<Void, StorageError> = writer.queue.sync {
            writer.access { w in Result { () throws(StorageError) in try w.redirectWrites(to: path) } }
        }
        try result.get()
    }

    /// Test seam: like `redirectWritesForTesting`, but queued behind the batches already
    /// handed to the writer, so a test can fail one batch and let the next succeed.
    package func queueWriteRedirectForTesting(to path: String?) {
        writer.queue.async { self.writer.access { w in _ = try? w.redirectWrites(to: path) } }
    }

    /// Test seam: holds the writer so that appends pile up into one batch.
    package func suspendWriterForTesting() { writer.queue.suspend() }
    package func resumeWriterForTesting() { writer.queue.resume() }
}
