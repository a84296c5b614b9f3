import Foundation
import Testing
import StoreRelayTestSupport

/// The test support's `posix_spawn` child, which replaced Foundation's `Process`: what the
/// suites rely on — statuses, pipes, directory, environment, and no inherited descriptors.
@Suite struct ChildProcessTests {
    private func shell(_ script: String, configure: (ChildProcess) -> Void = { _ in }) throws -> ChildProcess {
        let child = ChildProcess()
        child.executableURL = URL(fileURLWithPath: "/bin/sh")
        child.arguments = ["-c", script]
        configure(child)
        try child.run()
        return child
    }

    @Test func reportsTheExitCode() throws {
        let child = try shell("exit 7")
        child.waitUntilExit()
        #expect(!child.isRunning)
        #expect(child.terminationStatus == 7)
    }

    @Test func reportsTheSignalThatEndedIt() throws {
        let child = try shell("sleep 30")
        #expect(child.isRunning)
        child.killAndWait()
        #expect(!child.isRunning)
        #expect(child.terminationStatus == SIGKILL)
    }

    /// Once collected, the child's pid may be another process's: nothing is sent to it, and
    /// tearing down twice is harmless.
    @Test func nothingIsSentOnceItHasExited() throws {
        let child = try shell("exit 3")
        child.waitUntilExit()
        child.send(SIGTERM)
        child.killAndWait()
        #expect(child.terminationStatus == 3, "the status is the child's own, not a signal's")
        let stopped = try shell("kill -STOP $$; exit 4")
        Thread.sleep(forTimeInterval: 0.2)
        stopped.send(SIGCONT)
        stopped.waitUntilExit()
        #expect(stopped.terminationStatus == 4, "SIGCONT reached the stopped child")
    }

    /// `freeze` returns only once every thread has stopped: two threads that keep appending
    /// to a file append nothing more until SIGCONT.
    @Test func freezeReturnsOnceEveryThreadHasStopped() throws {
        let file = try TestPaths.makeTemporaryDirectory("freeze").appendingPathComponent("ticks").path
        let script = """
            import threading
            def tick(name):
                while True:
                    with open(\(String(reflecting: file)), "a") as f: f.write(name)
            for name in "ab": threading.Thread(target=tick, args=(name,), daemon=True).start()
            threading.Event().wait()
            """
        let child = ChildProcess()
        child.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        child.arguments = ["python3", "-c", script]
        try child.run()
        defer { child.killAndWait() }
        func size() -> Int { ((try? FileManager.default.attributesOfItem(atPath: file))?[.size] as? Int) ?? 0 }
        #expect(pollUntil(timeout: 10) { size() > 0 })
        #expect(child.freeze())
        let frozen = size()
        Thread.sleep(forTimeInterval: 0.1)
        #expect(size() == frozen, "a thread ran after freeze() returned")
        child.send(SIGCONT)
        #expect(pollUntil(timeout: 10) { size() > frozen })
    }

    @Test func pipesCarryStandardStreamsAndEndAtExit() throws {
        let input = Pipe(), output = Pipe(), errors = Pipe()
        let child = try shell("read line; echo \"out:$line\"; echo err >&2") {
            $0.standardInput = input
            $0.standardOutput = output
            $0.standardError = errors
        }
        try input.fileHandleForWriting.write(contentsOf: Data("hello\n".utf8))
        try input.fileHandleForWriting.close()
        // Reading to the end returns only because the parent closed its copy of the write end.
        let out = output.fileHandleForReading.readDataToEndOfFile()
        let err = errors.fileHandleForReading.readDataToEndOfFile()
        child.waitUntilExit()
        #expect(String(decoding: out, as: UTF8.self) == "out:hello\n")
        #expect(String(decoding: err, as: UTF8.self) == "err\n")
        #expect(child.terminationStatus == 0)
    }

    @Test func runsInTheDirectoryWithTheEnvironmentGiven() throws {
        let output = Pipe()
        let child = try shell("pwd; echo \"$ONLY\"; echo \"${HOME:-unset}\"") {
            $0.currentDirectoryURL = URL(fileURLWithPath: "/tmp")
            $0.environment = ["ONLY": "this", "PATH": "/usr/bin:/bin"]
            $0.standardOutput = output
        }
        let out = output.fileHandleForReading.readDataToEndOfFile()
        child.waitUntilExit()
        #expect(String(decoding: out, as: UTF8.self) == "/tmp\nthis\nunset\n")
    }

    /// A socket the test holds open must not live on in a child: the child sees 0, 1 and 2 only.
    @Test func noDescriptorButTheStandardThreeIsInherited() throws {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #expect(socket > 2)
        defer { close(socket) }
        let output = Pipe()
        let child = try shell("ls /proc/self/fd") { $0.standardOutput = output }
        let out = output.fileHandleForReading.readDataToEndOfFile()
        child.waitUntilExit()
        // `ls` itself opens one descriptor for the directory it lists.
        let descriptors = String(decoding: out, as: UTF8.self).split(separator: "\n").compactMap { Int($0) }
        #expect(descriptors.filter { $0 > 3 }.isEmpty, "inherited: \(descriptors)")
    }

    /// `FileHandle.nullDevice` has no descriptor on Linux; the child still gets /dev/null,
    /// never the test process's own streams.
    @Test func theNullDeviceIsDevNull() throws {
        let output = Pipe()
        // The shell's own descriptors ($$), read before anything is redirected.
        let probe = try shell("i=$(readlink /proc/$$/fd/0); o=$(readlink /proc/$$/fd/1); printf '%s\\n%s\\n' \"$i\" \"$o\" >&2") {
            $0.standardInput = FileHandle.nullDevice
            $0.standardOutput = FileHandle.nullDevice
            $0.standardError = output
        }
        let out = output.fileHandleForReading.readDataToEndOfFile()
        probe.waitUntilExit()
        let targets = String(decoding: out, as: UTF8.self).split(separator: "\n")
        #expect(targets.first == "/dev/null" && targets.dropFirst().first == "/dev/null", "\(targets)")
    }

    @Test func aMissingExecutableIsAnError() {
        let child = ChildProcess()
        child.executableURL = URL(fileURLWithPath: "/nonexistent/binary")
        #expect(throws: ChildProcess.SpawnError.self) { try child.run() }
    }
}
