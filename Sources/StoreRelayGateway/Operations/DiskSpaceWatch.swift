#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import StoreRelayCore

/// Checks the free space of the data directory's file system every so often and sends
/// `disk.low` when it falls below `disk-low`: a full disk makes the journal refuse writes, and
/// every notification is then answered 503 (SPEC "Durability"). Told once per crossing; it is
/// told again only after the space has come back above the threshold.
final class DiskSpaceWatch: Sendable {
    private let path: String
    private let events: OperationalEvents
    private let threshold: Locked<Int>
    private let low = Locked(false)
    /// The last figure read, for `storerelay_data_free_bytes`; nil before the first check or
    /// when the directory cannot be read.
    private let lastFree = Locked<Int?>(nil)
    private let timer = RepeatingTimer()
    private let queue = DispatchQueue(label: "storerelay.disk-space")

    init(path: String, threshold: Int, events: OperationalEvents) {
        self.path = path
        self.threshold = Locked(threshold)
        self.events = events
    }

    /// Checks now, then every `interval` (a minute: the journal grows by megabytes a minute at
    /// most, against a threshold in gigabytes).
    func start(interval: Duration = .seconds(60)) {
        timer.start(every: interval, leeway: .seconds(1), on: queue) { [weak self] in self?.check() }
    }

    func stop() { timer.stop() }

    func setThreshold(_ bytes: Int) { threshold.withLock { $0 = bytes } }

    var freeBytes: Int? { lastFree.current }

    /// Forgets a crossing already told: a new destination for the events (a reload) hears of
    /// a disk still low at the next check.
    func rearm() { low.withLock { $0 = false } }

    /// Bytes an unprivileged writer may still use on `path`'s file system (`f_bavail`: the
    /// journal does not run as root's reserve).
    static func available(at path: String) -> Int? {
        var stats = statvfs()
        guard statvfs(path, &stats) == 0 else { return nil }
        return Int(stats.f_bavail) * Int(stats.f_frsize)
    }

    func check() {
        guard let free = Self.available(at: path) else { return }
        lastFree.withLock { $0 = free }
        let limit = threshold.current
        let crossed = low.withLock { low -> Bool in
            defer { low = free < limit }
            return !low && free < limit
        }
        guard crossed else { return }
        events.emit("disk.low", [
            ("path", .string(path)), ("freeBytes", .integer(Int64(free))), ("thresholdBytes", .integer(Int64(limit))),
        ])
    }
}
