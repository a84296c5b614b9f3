import Dispatch

/// Seams for the package's own tests: they run the real code paths, only choosing when.
extension FileQueue {
    /// Test seam: runs one age check now, as a timer tick would, and waits for it.
    package func checkAgeForTesting() async {
        await withCheckedContinuation { continuation in
            checkAge { continuation.resume() }
        }
    }

    /// Test seam: segments created from now on write to `path` (for example `/dev/full`,
    /// where every write fails with ENOSPC) through the same system calls; nil restores.
    package func redirectNewSegmentsForTesting(to path: String?) {
        writer.queue.sync { writer.access { $0.writeRedirectForTesting = path } }
    }
}
