#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Seams for the package's own tests: the real code paths and system calls, with the test
/// choosing when the writer runs and where its bytes go.
extension PendingRecordLog {
    /// Holds the writer so that puts pile up into one batch.
    package func suspendWriterForTesting() { queue.suspend() }
    package func resumeWriterForTesting() { queue.resume() }

    /// The batches synced so far.
    package var syncCountForTesting: Int { state.withLock { $0.syncs } }

    /// The next batch goes to `path` (`/dev/full`: every write fails with ENOSPC) instead of
    /// the log, as a failing disk would have it.
    package func redirectNextWriteForTesting(to path: String) throws(StorageError) {
        let fd = try JournalFiles.openFile(path, O_WRONLY)
        queue.sync {
            state.withLock { state in
                state.closeFile()
                state.fd = fd
            }
        }
    }
}
