import Foundation
import StoreRelayCore
import StoreRelayTestSupport

/// A webhook signing key for tests, Standard Webhooks style.
let testSigningSecret = "whsec_" + Data("storerelay-test-signing-key-32by".utf8).base64EncodedString()

extension Gateway {
    /// The dead letters on disk, parsed.
    var deadLetters: [JSONValue] {
        let dir = directory.appendingPathComponent("data/dead-letters")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
        return names.filter { $0.hasSuffix(".json") }.compactMap { name in
            (try? Data(contentsOf: dir.appendingPathComponent(name))).flatMap { try? JSONValue.parse(Array($0)) }
        }
    }

    /// How many dead letters are on disk, without reading them (cheap to poll by the thousand).
    var deadLetterFileCount: Int {
        let dir = directory.appendingPathComponent("data/dead-letters")
        return ((try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []).filter { $0.hasSuffix(".json") }.count
    }

    /// Waits until the number of dead letters on disk satisfies `predicate`.
    @discardableResult
    func waitForDeadLetterCount(timeout: Double = 20, _ predicate: (Int) -> Bool) -> Bool {
        pollUntil(timeout: timeout, interval: 0.05) { predicate(deadLetterFileCount) }
    }

    /// Waits until the dead letters satisfy `predicate`.
    @discardableResult
    func waitForDeadLetters(timeout: Double = 20, _ predicate: ([JSONValue]) -> Bool) -> Bool {
        pollUntil(timeout: timeout) { predicate(deadLetters) }
    }

    /// Waits until the lines of a file queue satisfy `predicate`.
    @discardableResult
    func waitForFileQueue(_ relativeDirectory: String, timeout: Double = 20, _ predicate: ([String]) -> Bool) -> Bool {
        pollUntil(timeout: timeout, interval: 0.05) { predicate(fileQueueLines(relativeDirectory)) }
    }

    /// Every line of every segment (open, closed or gzip-compressed) of a file queue.
    func fileQueueLines(_ relativeDirectory: String) -> [String] {
        let dir = directory.appendingPathComponent(relativeDirectory)
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []).sorted()
        var lines: [String] = []
        for name in names where name.contains(".jsonl") && !name.hasSuffix(".tmp") {
            let path = dir.appendingPathComponent(name).path
            let text: String
            if name.hasSuffix(".gz") {
                text = (try? CommandRunner.run("gzip", ["-d", "-c", path]).stdout) ?? ""
            } else {
                text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
            }
            lines += text.split(separator: "\n").map(String.init)
        }
        return lines
    }
}

/// A destination block with short, test-friendly retry settings; `options` lines replace the
/// defaults of the same name.
func webhookDestination(_ name: String, _ url: String, options: String = "") -> String {
    let extra = options.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
    let defaults = ["signing-secret \(testSigningSecret)", "backoff 50ms 200ms", "max-attempts 4", "timeout 2s"]
        .filter { line in !extra.contains { $0.split(separator: " ").first == line.split(separator: " ").first } }
    return "destination \(name) webhook \(url) {\n"
        + (defaults + extra).map { "    " + $0 }.joined(separator: "\n") + "\n}"
}

/// A loopback port that was free a moment ago (for gateways restarted on the same port).
func freeLoopbackPort() -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
    _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
    return Int(UInt16(bigEndian: address.sin_port))
}
