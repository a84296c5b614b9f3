import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Commands a test sends to its server as an operator would with `redis-cli`: `CONFIG SET`,
/// `REPLICAOF`, `INFO`. Over a plain blocking socket of its own, so the harness does not
/// depend on the client under test.
extension RedisServerProcess {
    /// Sends one command and returns its reply as text: a string as it is, an error as
    /// `-ERR ...`, an integer in decimal, an array's elements one per line.
    @discardableResult
    public func command(_ arguments: String...) throws -> String {
        try commands([arguments])[0]
    }

    /// Sends each command once the previous one has answered, all on one connection (as
    /// WAITAOF needs: it waits for its own connection's writes); returns the replies.
    public func commands(_ commands: [[String]]) throws -> [String] {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw RedisServerError("socket() failed") }
        defer { close(fd) }
        // A paused server must not hang the test.
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw RedisServerError("cannot connect to port \(port)") }
        var replies: [String] = []
        for arguments in commands {
            var request = Array("*\(arguments.count)\r\n".utf8)
            for argument in arguments {
                request += Array("$\(argument.utf8.count)\r\n\(argument)\r\n".utf8)
            }
            guard write(fd, request, request.count) == request.count else { throw RedisServerError("cannot send \(arguments[0])") }
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 16 * 1024)
            while true {
                var reader = ReplyReader(bytes: received)
                if let reply = reader.reply() {
                    replies.append(reply)
                    break
                }
                let count = read(fd, &buffer, buffer.count)
                guard count > 0 else { throw RedisServerError("no reply to \(arguments[0]) from port \(port)") }
                received += buffer[..<count]
            }
        }
        return replies
    }

    /// Waits until this primary lists `count` replicas as online (their initial sync done)
    /// and, with `appendOnly` (WAITAOF: Valkey, Redis 7.2), until a write reaches their
    /// append-only files (a replica rewrites its file after a full sync, and reports none
    /// until then).
    public func waitForReplicas(_ count: Int, appendOnly: Bool = false, timeout: Double = 20) -> Bool {
        pollUntil(timeout: timeout, interval: 0.05) {
            let info = (try? command("INFO", "replication")) ?? ""
            // Lines end in "\r\n", one Character to Swift: split on newlines, not on "\n".
            let online = info.split(whereSeparator: \.isNewline).filter { $0.hasPrefix("slave") && $0.contains("state=online") }
            guard online.count >= count else { return false }
            guard appendOnly else { return true }
            let waited = try? commands([["SET", "storerelay-test:replicated", "1"], ["WAITAOF", "1", String(count), "1500"]])
            return waited?.last == "1\n\(count)"
        }
    }
}

/// Reads one RESP2 reply from the bytes so far; nil while it is incomplete.
private struct ReplyReader {
    let bytes: [UInt8]
    var index = 0

    init(bytes: [UInt8]) { self.bytes = bytes }

    mutating func reply() -> String? {
        guard let line = line(), let kind = line.first else { return nil }
        let rest = String(line.dropFirst())
        switch kind {
        case "+", ":": return rest
        case "-": return line
        case "$":
            guard let length = Int(rest) else { return nil }
            if length < 0 { return "" }
            guard index + length + 2 <= bytes.count else { return nil }
            defer { index += length + 2 }
            return String(decoding: bytes[index..<index + length], as: UTF8.self)
        case "*":
            guard let count = Int(rest) else { return nil }
            var elements: [String] = []
            for _ in 0..<max(count, 0) {
                guard let element = reply() else { return nil }
                elements.append(element)
            }
            return elements.joined(separator: "\n")
        default:
            return line
        }
    }

    private mutating func line() -> String? {
        var end = index
        while end + 1 < bytes.count {
            if bytes[end] == 13 && bytes[end + 1] == 10 {
                defer { index = end + 2 }
                return String(decoding: bytes[index..<end], as: UTF8.self)
            }
            end += 1
        }
        return nil
    }
}
