import CStoreRelayShims
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A child process started with `posix_spawn`, in place of Foundation's `Process`.
///
/// Why not `Process`: on this toolchain `Process.run()` lists `/proc/self/fd` to find the
/// descriptors to close in the child, and copies each `dirent`'s whole 256-byte name field
/// where glibc only allocated the record's length. When a record ends a page and the next
/// page is unmapped, the copy faults (swift-corelibs-foundation PR #5472, fixed upstream in
/// 2026). Test processes open hundreds of sockets, so whole-suite runs crashed in
/// `Process.run()` about one run in five. `posix_spawn_file_actions_addclosefrom_np` closes
/// the same descriptors without reading the directory.
///
/// The surface is the part of `Process` the tests use, under the same names, so a call site
/// changes only the type it constructs. Each child has one reaper thread blocked in
/// `waitpid` for it alone: no other code in the test process reaps children by pid, and a
/// thread per child keeps `isRunning` and `waitUntilExit()` free of polling.
public final class ChildProcess: @unchecked Sendable {
    public var executableURL: URL?
    public var arguments: [String] = []
    /// The child's whole environment; `nil` inherits the test process's.
    public var environment: [String: String]?
    public var currentDirectoryURL: URL?
    /// Each is `nil` (inherit), a `FileHandle` (for example `FileHandle.nullDevice`) or a `Pipe`.
    public var standardInput: Any?
    public var standardOutput: Any?
    public var standardError: Any?

    private let state = NSCondition()
    private var pid: pid_t = 0
    private var exitStatus: Int32?

    public init() {}

    public var processIdentifier: Int32 { state.lock(); defer { state.unlock() }; return pid }

    public var isRunning: Bool {
        state.lock(); defer { state.unlock() }
        return pid != 0 && exitStatus == nil
    }

    /// The exit code, or the number of the signal that ended the child (as `Process` reports).
    public var terminationStatus: Int32 {
        state.lock(); defer { state.unlock() }
        guard let status = exitStatus else { preconditionFailure("the child is still running") }
        return Self.decode(status)
    }

    /// Sends `signal` while the child runs; nothing once it has exited. The reaper collects
    /// the child only under the same lock (see `reap`), so a pid signalled here is never one
    /// the kernel has handed to another process since.
    public func send(_ signal: Int32) {
        state.lock(); defer { state.unlock() }
        guard pid != 0, exitStatus == nil else { return }
        kill(pid, signal)
    }

    /// Stops the child (SIGSTOP) and returns once every one of its threads has stopped.
    /// `kill` returns as soon as the signal is queued, and the stop reaches the other threads
    /// only when the one that takes it is scheduled: on a busy machine a server could still
    /// answer for milliseconds after `send(SIGSTOP)`. Gives up after `timeout` seconds.
    @discardableResult
    public func freeze(timeout: Double = 5) -> Bool {
        let pid = processIdentifier
        guard pid != 0 else { return false }
        send(SIGSTOP)
        let deadline = Date().addingTimeInterval(timeout)
        repeat {
            if Self.everyThreadIsStopped(pid) { return true }
            Thread.sleep(forTimeInterval: 0.002)
        } while Date() < deadline && isRunning
        return false
    }

    /// Reads each thread's state from `/proc/PID/task/TID/stat` (the letter after the name
    /// in parentheses): `T` is stopped by a signal, `t` by a tracer.
    private static func everyThreadIsStopped(_ pid: pid_t) -> Bool {
        let tasks = "/proc/\(pid)/task"
        guard let threads = try? FileManager.default.contentsOfDirectory(atPath: tasks), !threads.isEmpty else { return false }
        return threads.allSatisfy { thread in
            guard let stat = try? String(contentsOfFile: "\(tasks)/\(thread)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return false }
            let state = stat[stat.index(after: close)...].drop { $0 == " " }.first
            return state == "T" || state == "t"
        }
    }

    /// Kills the child (SIGKILL) and waits for it: what a crash looks like to its clients,
    /// and how the tests tear a child down. Nothing when it has exited already.
    public func killAndWait() {
        send(SIGKILL)
        if processIdentifier != 0 { waitUntilExit() }
    }

    public func waitUntilExit() {
        state.lock(); defer { state.unlock() }
        precondition(pid != 0, "waitUntilExit() before run()")
        while exitStatus == nil { state.wait() }
    }

    public func run() throws {
        guard let executable = executableURL?.path else { throw SpawnError(message: "no executable", code: EINVAL) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }

        // The child starts with default signal handling and nothing blocked: the test process
        // ignores SIGPIPE, and an ignored signal would stay ignored across exec.
        var defaults = sigset_t(), empty = sigset_t()
        sigfillset(&defaults)
        sigemptyset(&empty)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        var parentEndsToClose: [FileHandle] = []
        for (target, stream) in [(Int32(0), standardInput), (1, standardOutput), (2, standardError)] {
            let added: Int32
            switch stream {
            case nil:
                continue
            case let pipe as Pipe:
                // The child gets the end it uses; the parent closes that end after spawning,
                // or a reader would never see end of file.
                let childEnd = target == 0 ? pipe.fileHandleForReading : pipe.fileHandleForWriting
                parentEndsToClose.append(childEnd)
                added = posix_spawn_file_actions_adddup2(&actions, childEnd.fileDescriptor, target)
            case let handle as FileHandle where handle.fileDescriptor < 0:
                // `FileHandle.nullDevice` has no descriptor on Linux: the child opens
                // /dev/null itself. (A failed dup2 would leave the child the test process's
                // own stream, and a server holding that pipe keeps `swift test` waiting.)
                added = posix_spawn_file_actions_addopen(&actions, target, "/dev/null", O_RDWR, 0)
            case let handle as FileHandle:
                added = posix_spawn_file_actions_adddup2(&actions, handle.fileDescriptor, target)
            default:
                throw SpawnError(message: "standard stream \(target) is neither a Pipe nor a FileHandle", code: EINVAL)
            }
            guard added == 0 else { throw SpawnError(message: "standard stream \(target)", code: added) }
        }
        // Nothing but 0, 1 and 2 reaches the child: a listening socket or a client connection
        // the child inherited would outlive the test that closed it.
        storerelay_spawn_addclosefrom(&actions, 3)
        if let directory = currentDirectoryURL?.path {
            storerelay_spawn_addchdir(&actions, directory)
        }

        let argv = CStrings([executable] + arguments)
        let environmentStrings = (environment ?? ProcessInfo.processInfo.environment).map { "\($0.key)=\($0.value)" }
        let envp = CStrings(environmentStrings)
        var spawned: pid_t = 0
        // Swift may end an object's life at its last use, which here is reading `pointers`
        // before the call: `deinit` would free the strings while posix_spawn reads them.
        let result = withExtendedLifetime((argv, envp)) {
            posix_spawn(&spawned, executable, &actions, &attributes, argv.pointers, envp.pointers)
        }
        for handle in parentEndsToClose { try? handle.close() }
        guard result == 0 else { throw SpawnError(message: "posix_spawn \(executable)", code: result) }

        let child = spawned
        state.lock()
        pid = child
        state.unlock()
        let reaper = Thread { [self] in reap(child) }
        reaper.name = "reaper \(child)"
        reaper.start()
    }

    /// Waits for the child to exit without collecting it (`WNOWAIT`), then collects it under
    /// the lock: until `exitStatus` is set the pid still names this (zombie) child, so `send`
    /// can never signal a process that reused it.
    private func reap(_ child: pid_t) {
        var info = siginfo_t()
        while waitid(P_PID, id_t(child), &info, WEXITED | WNOWAIT) == -1 && errno == EINTR {}
        state.lock()
        var status: Int32 = 0
        while waitpid(child, &status, 0) == -1 && errno == EINTR {}
        exitStatus = status
        state.broadcast()
        state.unlock()
    }

    private static func decode(_ status: Int32) -> Int32 {
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : signal
    }

    public struct SpawnError: Error, CustomStringConvertible {
        public let message: String
        public let code: Int32
        public var description: String { "\(message): \(String(cString: strerror(code)))" }
    }
}

/// NUL-terminated C strings and the NULL-terminated array `posix_spawn` takes, freed together.
private final class CStrings {
    let pointers: [UnsafeMutablePointer<CChar>?]

    init(_ strings: [String]) { pointers = strings.map { strdup($0) } + [nil] }

    deinit { for pointer in pointers { free(pointer) } }
}
