#if canImport(Glibc)
import Glibc
#endif

/// Monotonic time in nanoseconds: every latency in the harness is a difference of two of these,
/// taken in the same process.
public enum Monotonic {
    public static func nanoseconds() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }

    /// Process CPU time (user + system, every thread) in nanoseconds, to tell the harness's own
    /// share of the two cores.
    public static func processCPUNanoseconds() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }

    /// The calling thread's CPU time in nanoseconds.
    public static func threadCPUNanoseconds() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }
}
