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
        // A test process that has exited but is not reaped yet is a zombie, which `kill -0`
        // still finds: `swift test` reaps it only after its output pipe closes, and a server
        // still running might hold that pipe. So an exited (zombie) test process counts as gone.
        let test = getpid()
        let testAlive = "kill -0 \(test) 2>/dev/null && ! grep -qs '^State:[[:space:]]*Z' /proc/\(test)/status"
        watchdog.arguments = ["-c", "while \(testAlive) && kill -0 \(pid) 2>/dev/null; do sleep 1; done; kill -9 \(pid) 2>/dev/null"]
        watchdog.standardInput = FileHandle.nullDevice
        watchdog.standardOutput = FileHandle.nullDevice
        watchdog.standardError = FileHandle.nullDevice
        try watchdog.run()
    }
}
