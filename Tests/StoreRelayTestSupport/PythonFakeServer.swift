import Foundation
import StoreRelayCore

/// One of the Python fakes of a vendor's API (`Tests/Fixtures/fake_*.py`) as a child process
/// over HTTPS with the shared test CA: it prints its port, reads a control file on every
/// request, and logs every request it answered as a JSON line. What the fakes of Apple's and
/// Google's APIs share; each adds its own keys and arguments.
public final class PythonFakeServer: @unchecked Sendable {
    // Invariant: every stored property is set once in init.
    public let port: Int
    /// The test CA that vouches for the fake's certificate (the `ca-file` of its URL line).
    public let caFile: String
    private let logFile: URL
    private let controlFile: URL
    private let process: ChildProcess

    /// Starts `Tests/Fixtures/<script>` with `--log`, `--control`, `--cert`, `--key` and
    /// `arguments`, files kept in `directory`; `name` says which fake in an error.
    public init(script: String, name: String, directory: URL, arguments: [String]) throws {
        logFile = directory.appendingPathComponent("requests.jsonl")
        controlFile = directory.appendingPathComponent("control.json")
        _ = FileManager.default.createFile(atPath: logFile.path, contents: nil)
        try Data("{}".utf8).write(to: controlFile)
        let tls = try TLSTestCertificates.shared()
        caFile = tls.caFile
        process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", TestPaths.packageRoot.appendingPathComponent("Tests/Fixtures/\(script)").path,
            "--log", logFile.path, "--control", controlFile.path, "--cert", tls.localhost.certificateFile,
            "--key", tls.localhost.privateKeyFile,
        ] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        guard let port = output.fileHandleForReading.readLine().flatMap({ Int($0) }) else {
            process.killAndWait()
            throw GatewayProcessError(message: "the \(name) did not start")
        }
        self.port = port
    }

    deinit {
        process.killAndWait()
    }

    /// `https://127.0.0.1:PORT`.
    public var url: String { "https://127.0.0.1:\(port)" }

    /// Replaces the control file (atomically: the fake reads it on every request).
    public func control(_ json: JSONValue) throws {
        let temporary = controlFile.appendingPathExtension("tmp")
        try Data(json.serializedBytes()).write(to: temporary)
        guard rename(temporary.path, controlFile.path) == 0 else {
            throw GatewayProcessError(message: "cannot replace \(controlFile.path): errno \(errno)")
        }
    }

    /// Every request answered so far, oldest first.
    public var requests: [JSONValue] {
        guard let data = try? Data(contentsOf: logFile) else { return [] }
        return String(decoding: data, as: UTF8.self).split(separator: "\n").compactMap { try? JSONValue.parse(String($0)) }
    }

    /// Waits until `predicate` holds for the requests answered, or the deadline passes.
    @discardableResult
    public func waitFor(timeout: Double = 20, _ predicate: ([JSONValue]) -> Bool) -> Bool {
        pollUntil(timeout: timeout, interval: 0.05) { predicate(requests) }
    }
}
