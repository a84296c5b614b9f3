import Foundation

/// Kills a server a suite shares (kept in a `static` that is never released) once the test
/// process exits, so no broker outlives its tests: a small shell loop that watches both.
/// A `ChildProcess` stays alive until its reaper thread has collected the child, so the
/// watchdog needs no reference kept here.
public enum ExitWatchdog {
    /// Starts the watchdog of server `pid`.
    public static func watch(_ pid: Int32) throws {
        let watchdog = ChildProcess()
        watchdog.executableURL = URL(fileURLWithPath: "/bin/sh")
        watchdog.arguments = ["-c", "while kill -0 \(getpid()) 2>/dev/null && kill -0 \(pid) 2>/dev/null; do sleep 1; done; kill -9 \(pid) 2>/dev/null"]
        watchdog.standardInput = FileHandle.nullDevice
        watchdog.standardOutput = FileHandle.nullDevice
        watchdog.standardError = FileHandle.nullDevice
        try watchdog.run()
    }
}
