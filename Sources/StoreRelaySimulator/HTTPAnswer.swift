/// The gateway's answer to a posted notification.
public struct HTTPAnswer: Sendable, Hashable {
    public let status: Int
    public let reason: String
    public let body: String

    public var isSuccess: Bool { (200..<300).contains(status) }

    /// Parses a complete HTTP/1.1 response (the connection was closed after it): the status
    /// line, headers, and a body framed by `Transfer-Encoding: chunked`, `Content-Length` or
    /// the end of the connection (RFC 9112 §6.3). Interim 1xx responses are skipped.
    public static func parse(_ bytes: [UInt8]) throws(SimulatorError) -> HTTPAnswer {
        var start = 0
        while true {
            guard let headEnd = find([13, 10, 13, 10], in: bytes, from: start) else {
                throw SimulatorError(.delivery, "the gateway's answer is not a complete HTTP response")
            }
            let head = String(decoding: bytes[start..<headEnd], as: UTF8.self)
            let lines = head.split(separator: "\r\n", omittingEmptySubsequences: false)
            let statusParts = lines[0].split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
            guard statusParts.count >= 2, statusParts[0].hasPrefix("HTTP/1."), let status = Int(statusParts[1]),
                  (100..<600).contains(status)
            else {
                throw SimulatorError(.delivery, "the gateway's answer has no valid HTTP status line")
            }
            let bodyStart = headEnd + 4
            if (100..<200).contains(status) { start = bodyStart; continue }

            var headers: [String: String] = [:]
            for line in lines.dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { continue }
                let name = line[..<colon].lowercased()
                headers[name] = line[line.index(after: colon)...].trimmingSpaces()
            }
            let reason = statusParts.count > 2 ? String(statusParts[2]) : ""
            let rest = Array(bytes[bodyStart...])
            let body: [UInt8]
            if headers["transfer-encoding"]?.lowercased().contains("chunked") == true {
                body = try dechunk(rest)
            } else if let lengthText = headers["content-length"] {
                guard let length = Int(lengthText), length >= 0, length <= rest.count else {
                    throw SimulatorError(.delivery, "the gateway's answer was cut short (Content-Length \(lengthText.prefix(20)))")
                }
                body = Array(rest[0..<length])
            } else {
                body = rest
            }
            return HTTPAnswer(status: status, reason: reason, body: String(decoding: body, as: UTF8.self))
        }
    }

    /// RFC 9112 §7.1: hex size (extensions ignored), CRLF, data, CRLF, ... until size 0.
    private static func dechunk(_ bytes: [UInt8]) throws(SimulatorError) -> [UInt8] {
        var out: [UInt8] = []
        var index = 0
        while true {
            guard let lineEnd = find([13, 10], in: bytes, from: index) else {
                throw SimulatorError(.delivery, "the gateway's chunked answer was cut short")
            }
            let sizeText = String(decoding: bytes[index..<lineEnd], as: UTF8.self)
                .split(separator: ";", maxSplits: 1).first.map { $0.trimmingSpaces() } ?? ""
            guard let size = Int(sizeText, radix: 16), size >= 0 else {
                throw SimulatorError(.delivery, "the gateway's chunked answer has an invalid chunk size")
            }
            let dataStart = lineEnd + 2
            if size == 0 { return out }
            guard dataStart + size <= bytes.count else {
                throw SimulatorError(.delivery, "the gateway's chunked answer was cut short")
            }
            out.append(contentsOf: bytes[dataStart..<(dataStart + size)])
            index = dataStart + size + 2
        }
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        guard haystack.count >= needle.count, start <= haystack.count - needle.count else { return nil }
        for index in start...(haystack.count - needle.count) where haystack[index] == needle[0] {
            if Array(haystack[index..<(index + needle.count)]) == needle { return index }
        }
        return nil
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs (header whitespace, RFC 9110 §5.6.3).
    func trimmingSpaces() -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { $0 != " " && $0 != "\t" }),
              let last = scalars.lastIndex(where: { $0 != " " && $0 != "\t" })
        else { return "" }
        var text = ""
        text.unicodeScalars.append(contentsOf: scalars[first...last])
        return text
    }
}
