import Foundation
import StoreRelayCore

/// A recording webhook sink: `Tests/Fixtures/sink.py` as a child process, independent of
/// StoreRelay's code (it checks signatures with Python's hmac). See the script for its paths.
public final class WebhookSink: @unchecked Sendable {
    // Invariant: every stored property is set once in init.
    public let port: Int
    public let logFile: URL
    public let scheme: String
    private let process: ChildProcess

    /// Starts the sink; `secret` (a `whsec_` key) turns signature checking on; `certificate`
    /// and `key` (PEM paths) serve HTTPS.
    public init(secret: String? = nil, certificate: String? = nil, key: String? = nil) throws {
        let directory = try TestPaths.makeTemporaryDirectory("storerelay-sink")
        logFile = directory.appendingPathComponent("requests.jsonl")
        _ = FileManager.default.createFile(atPath: logFile.path, contents: nil)
        process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        var arguments = ["python3", TestPaths.packageRoot.appendingPathComponent("Tests/Fixtures/sink.py").path,
                         "--log", logFile.path]
        if let secret { arguments += ["--secret", secret] }
        if let certificate, let key { arguments += ["--cert", certificate, "--key", key] }
        scheme = certificate == nil ? "http" : "https"
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let line = output.fileHandleForReading.readLine()
        guard let port = line.flatMap({ Int($0) }) else {
            process.killAndWait()
            throw GatewayProcessError(message: "the webhook sink did not start")
        }
        self.port = port
    }

    deinit {
        // SIGKILL: nothing the sink does on SIGTERM is needed, and it cannot be caught.
        process.killAndWait()
    }

    /// The URL of `path` on this sink, as a destination would name it.
    public func url(_ path: String, host: String = "127.0.0.1") -> String { "\(scheme)://\(host):\(port)\(path)" }

    /// Every request received so far, oldest first.
    public var requests: [JSONValue] {
        guard let data = try? Data(contentsOf: logFile) else { return [] }
        return String(decoding: data, as: UTF8.self).split(separator: "\n").compactMap { try? JSONValue.parse(String($0)) }
    }

    public func requests(path: String) -> [JSONValue] { requests.filter { $0["path"]?.stringValue == path } }

    /// For a `/fail-every/M/K/...` path: the numbers of the events (`...-N` ids) it answered
    /// 200 to, grouped by `N % groups` (a subscription each), in the order the sink received
    /// them.
    public func successes(path: String, groups: Int) -> [Int: [Int]] { successes(paths: [path], groups: groups) }

    /// `successes(path:groups:)` over several such paths (one destination before and after a
    /// reload, say), in the order the sink received the requests.
    public func successes(paths: [String], groups: Int) -> [Int: [Int]] {
        var rules: [String: (every: Int, times: Int)] = [:]
        for path in paths {
            let parts = path.split(separator: "/")
            guard parts.count >= 3, parts[0] == "fail-every", let every = Int(parts[1]), let times = Int(parts[2]) else { return [:] }
            rules[path] = (every, times)
        }
        var delivered: [Int: [Int]] = [:]
        for request in requests {
            guard let path = request["path"]?.stringValue, let rule = rules[path],
                  let id = request["headers"]?["webhook-id"]?.stringValue, let count = request["count"]?.int64Value,
                  let number = Int(id.split(separator: "-").last ?? "") else { continue }
            if !(number % rule.every == 0 && count <= rule.times) { delivered[number % groups, default: []].append(number) }
        }
        return delivered
    }

    /// Waits until `predicate` holds for the received requests, or the deadline passes.
    @discardableResult
    public func waitFor(timeout: Double = 20, _ predicate: ([JSONValue]) -> Bool) -> Bool {
        pollUntil(timeout: timeout) { predicate(requests) }
    }
}

extension FileHandle {
    /// Reads one line (without its newline), blocking; nil at end of file.
    func readLine() -> String? {
        var bytes: [UInt8] = []
        while true {
            let chunk = readData(ofLength: 1)
            guard let byte = chunk.first else { return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self) }
            if byte == 0x0A { return String(decoding: bytes, as: UTF8.self) }
            bytes.append(byte)
        }
    }
}
