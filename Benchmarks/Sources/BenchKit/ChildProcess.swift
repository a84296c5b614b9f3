#if canImport(Glibc)
import Glibc
#endif

/// A child process (the gateway, nginx, openssl) started with posix_spawn, its stdout and
/// stderr sent to files; observed through /proc and stopped with a signal.
public final class ChildProcess {
    public let pid: pid_t
    public let command: String
    private var exitStatus: Int32?

    /// Starts `arguments[0]` (a path) with `arguments`; stdout and stderr go to the given files.
    /// `stdoutDescriptor` (a pipe's write end, say) replaces the stdout file: that is how a
    /// bus reader written in Python hands its receipts to the harness's loop. `environment`
    /// is added to the harness's own (a broker's node name, ports and directories).
    public init(_ arguments: [String], stdout: String = "/dev/null", stdoutDescriptor: Int32? = nil, stderr: String,
                environment: [String: String] = [:]) throws(BenchError) {
        command = arguments.joined(separator: " ")
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        if let stdoutDescriptor {
            // dup2 leaves the copy without close-on-exec, so only this child keeps the pipe.
            posix_spawn_file_actions_adddup2(&actions, stdoutDescriptor, 1)
        } else {
            posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        }
        posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var inherited: [String] = []
        var index = 0
        while let entry = environ[index] {
            let text = String(cString: entry)
            let name = text.prefix { $0 != "=" }
            if environment[String(name)] == nil { inherited.append(text) }
            index += 1
        }
        let envp = (inherited + environment.map { "\($0.key)=\($0.value)" }).map { strdup($0) } + [nil]
        defer { envp.forEach { free($0) } }
        var child: pid_t = 0
        let result = posix_spawn(&child, arguments[0], &actions, nil, argv, envp)
        guard result == 0 else { throw BenchError("cannot start \(command): \(String(cString: strerror(result)))") }
        pid = child
    }

    /// The exit status once the process has exited, without waiting.
    public var hasExited: Bool {
        if exitStatus != nil { return true }
        var status: Int32 = 0
        if waitpid(pid, &status, WNOHANG) == pid { exitStatus = status }
        return exitStatus != nil
    }

    /// Sends `signal` and waits up to `timeout` seconds, then SIGKILL. Returns the wait status.
    @discardableResult
    public func stop(signal: Int32 = SIGTERM, timeout: Double = 10) -> Int32 {
        if hasExited { return exitStatus! }
        kill(pid, signal)
        let deadline = Monotonic.nanoseconds() + UInt64(timeout * 1e9)
        while !hasExited {
            if Monotonic.nanoseconds() > deadline {
                kill(pid, SIGKILL)
                var status: Int32 = 0
                waitpid(pid, &status, 0)
                exitStatus = status
                break
            }
            usleep(5_000)
        }
        return exitStatus!
    }

    /// Waits for the process to exit by itself (a command like openssl speed).
    public func wait() -> Int32 {
        if let exitStatus { return exitStatus }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        exitStatus = status
        return status
    }

    /// Resident memory now and its peak so far (VmRSS, VmHWM), in KiB.
    public func memory() -> (rss: Int, peak: Int) { ProcessStats.memory(pid: pid) }

    /// User + system CPU time consumed so far, in nanoseconds.
    public func cpuNanoseconds() -> UInt64 { ProcessStats.cpuNanoseconds(pid: pid) }
}

/// The whole of a small text file (/proc entries, logs), nil if it cannot be read.
public func readText(_ path: String) -> String? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65_536)
    while true {
        let count = read(fd, &chunk, chunk.count)
        if count <= 0 { break }
        bytes.append(contentsOf: chunk[0..<count])
    }
    return String(decoding: bytes, as: UTF8.self)
}
