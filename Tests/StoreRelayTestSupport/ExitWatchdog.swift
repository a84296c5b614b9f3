import Foundation
import StoreRelayCore

/// Kills a server a suite shares (kept in a `static` that is never released) once the test
/// process exits, so no broker outlives its tests: a small shell loop that watches both.
///
/// The watchdogs' `Process` objects are kept for the life of the test process: Foundation on
/// Linux reaps each child through the `Process` that started it, and a watchdog outlives the
/// scope that starts it, so none is released while its shell still runs.
public enum ExitWatchdog {
    private static let watchdogs = Locked<[Process]>([])

    /// Starts the watchdog of server `pid`.
    public static func watch(_ pid: Int32) throws {
        let watchdog = Process()
        watchdog.executableURL = URL(fileURLWithPath: "/bin/sh")
        watchdog.arguments = ["-c", "while kill -0 \(getpid()) 2>/dev/null && kill -0 \(pid) 2>/dev/null; do sleep 1; done; kill -9 \(pid) 2>/dev/null"]
        watchdog.standardInput = FileHandle.nullDevice
        watchdog.standardOutput = FileHandle.nullDevice
        watchdog.standardError = FileHandle.nullDevice
        try watchdog.run()
        watchdogs.withLock { $0.append(watchdog) }
    }
}
