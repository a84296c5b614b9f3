import Dispatch
import StoreRelayCore
internal import CStoreRelayShims
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Process-wide settings a long-running server needs.
enum ProcessSetup {
    /// Signal handling and descriptor limits, before anything opens a socket.
    static func prepare(logger: Logger) {
        // A peer that closes early must give EPIPE, not kill us; and a file-size limit must
        // give EFBIG to the journal (which answers 503), not kill us either.
        signal(SIGPIPE, SIG_IGN)
        signal(SIGXFSZ, SIG_IGN)
        raiseDescriptorLimit(logger: logger)
        capMallocArenas()
    }

    /// glibc gives every thread that allocates concurrently an arena of its own, up to eight
    /// per core, and keeps each one's freed memory: with a few dozen delivery threads the
    /// gateway held 290 MiB after a burst that needed a fraction of it. One arena per core
    /// keeps allocation contention low and the footprint honest. `MALLOC_ARENA_MAX` in the
    /// environment still wins.
    private static func capMallocArenas() {
        guard getenv("MALLOC_ARENA_MAX") == nil else { return }
        _ = storerelay_set_malloc_arena_max(Int32(max(2, sysconf(Int32(_SC_NPROCESSORS_ONLN)))))
    }

    /// Hundreds of concurrent connections need more descriptors than the usual soft limit.
    private static func raiseDescriptorLimit(logger: Logger) {
        var limit = rlimit()
        guard getrlimit(RLIMIT_NOFILE_VALUE, &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        let previous = limit.rlim_cur
        limit.rlim_cur = min(limit.rlim_max, 65536)
        if setrlimit(RLIMIT_NOFILE_VALUE, &limit) == 0 {
            logger.debug("raised the file descriptor limit", [("from", previous), ("to", String(limit.rlim_cur))])
        }
    }

    /// Calls `stop` on SIGTERM or SIGINT and `reload` on SIGHUP, each on its own queue.
    static func handleSignals(logger: Logger, stop: @escaping @Sendable () -> Void, reload: @escaping @Sendable () -> Void) {
        let queue = DispatchQueue(label: "storerelay.signals")
        var sources: [any DispatchSourceSignal] = []
        for signalNumber in [SIGTERM, SIGINT] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: queue)
            source.setEventHandler { @Sendable in
                logger.info("signal received", [("signal", signalNumber == SIGTERM ? "SIGTERM" : "SIGINT")])
                stop()
            }
            source.resume()
            sources.append(source)
        }
        signal(SIGHUP, SIG_IGN)
        // A reload may wait for retired destinations to close: never on the signal queue.
        let reloads = DispatchQueue(label: "storerelay.reload")
        let hangup = DispatchSource.makeSignalSource(signal: SIGHUP, queue: reloads)
        hangup.setEventHandler { @Sendable in
            logger.info("signal received", [("signal", "SIGHUP")])
            reload()
        }
        hangup.resume()
        sources.append(hangup)
        retainedSignalSources.withLock { $0 = sources }
    }

    /// Signal sources live as long as the process.
    private static let retainedSignalSources = Locked<[any DispatchSourceSignal]>([])
}

#if canImport(Glibc)
private let RLIMIT_NOFILE_VALUE = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
#else
private let RLIMIT_NOFILE_VALUE = RLIMIT_NOFILE
#endif
