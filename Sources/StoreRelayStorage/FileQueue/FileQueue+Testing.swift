import Dispatch

/// Seams for the package's own tests: they run the real code paths, only choosing when.
extension FileQueue {
    /// Test seam: runs one age check now, as a timer tick would, and waits for it.
    package func checkAgeForTesting() async {
        await withCheckedContinuation { continuation in
            checkAge { continuation.resume() }
        }
    }
}
