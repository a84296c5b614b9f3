/// Parsing of the request head: request line, header fields and the framing they imply.
extension HTTPRequestParser {
    struct Head {
        var request: HTTPRequest
        var framing: HTTPBodyFraming
        var expectsContinue: Bool
    }

    /// Parses the head without its final CRLFCRLF. Line ends were already checked to be CRLF.
    static func parseHead(_ bytes: ArraySlice<UInt8>, limits: Limits) throws(HTTPParseError) -> Head {
        let lineEnd = bytes.firstIndex(of: HTTPSyntax.cr) ?? bytes.endIndex
        let requestLine = bytes[bytes.startIndex..<lineEnd]
        let fieldBytes = lineEnd < bytes.endIndex ? bytes[(lineEnd + 2)...] : bytes[bytes.endIndex...]

        let parts = requestLine.split(separator: HTTPSyntax.space, omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw HTTPParseError(.invalidRequestLine, "request line is not 'method target version'") }
        guard HTTPSyntax.isToken(parts[0]) else { throw HTTPParseError(.invalidMethod, "method is not a token") }
        let method = String(decoding: parts[0], as: UTF8.self)
        let version: HTTPVersion
        switch String(decoding: parts[2], as: UTF8.self) {
        case "HTTP/1.1": version = .http1_1
        case "HTTP/1.0": version = .http1_0
        default: throw HTTPParseError(.invalidVersion, "version is not HTTP/1.0 or HTTP/1.1")
        }
        let target = String(decoding: parts[1], as: UTF8.self)
        guard let path = originPath(of: parts[1], method: method) else {
            throw HTTPParseError(.invalidTarget, "request target is not origin-form, absolute-form or '*'")
        }

        let headers = try HTTPFields.parse(fieldBytes)
        let hosts = headers.values(for: "Host")
        if hosts.count > 1 { throw HTTPParseError(.multipleHosts, "more than one Host field") }
        if hosts.isEmpty && version == .http1_1 { throw HTTPParseError(.missingHost, "HTTP/1.1 request without Host") }

        var request = HTTPRequest(method: method, target: path, version: version, headers: headers)
        request.target = target
        request.keepAlive = version == .http1_1
            ? !headers.containsToken("close", in: "Connection")
            : headers.containsToken("keep-alive", in: "Connection")

        let framing = try framing(of: headers, version: version, limits: limits)
        let expectsContinue = version == .http1_1 && framing != .none && framing != .length(0)
            && headers.values(for: "Expect").contains { HTTPSyntax.lowercasedListMembers($0) == ["100-continue"] }
        return Head(request: request, framing: framing, expectsContinue: expectsContinue)
    }

    /// Body framing (RFC 9112 §6.3), strictly: both headers, an unknown coding, or
    /// Content-Length values that disagree are errors, never guesses.
    private static func framing(of headers: HTTPHeaders, version: HTTPVersion, limits: Limits) throws(HTTPParseError) -> HTTPBodyFraming {
        let lengths = headers.values(for: "Content-Length")
        let codings = headers.values(for: "Transfer-Encoding")
        if !codings.isEmpty {
            if !lengths.isEmpty {
                throw HTTPParseError(.contentLengthWithTransferEncoding, "both Content-Length and Transfer-Encoding")
            }
            guard version == .http1_1 else {
                throw HTTPParseError(.unsupportedTransferEncoding, "Transfer-Encoding in an HTTP/1.0 request")
            }
            guard codings.flatMap(HTTPSyntax.lowercasedListMembers) == ["chunked"] else {
                throw HTTPParseError(.unsupportedTransferEncoding, "Transfer-Encoding other than chunked")
            }
            return .chunked
        }
        guard !lengths.isEmpty else { return .none }
        let length = try HTTPFields.contentLength(lengths)
        guard length <= limits.maxBodyBytes else {
            throw HTTPParseError(.bodyTooLarge, "Content-Length exceeds \(limits.maxBodyBytes) bytes")
        }
        return .length(length)
    }

    /// The path part of a request target (RFC 9112 §3.2), or nil when the form is not accepted.
    /// Absolute-form must be accepted by servers; authority-form (CONNECT) is not served.
    private static func originPath(of target: ArraySlice<UInt8>, method: String) -> String? {
        guard !target.isEmpty, target.allSatisfy(HTTPSyntax.isTargetChar), !target.contains(UInt8(ascii: "#")) else {
            return nil
        }
        if target.first == UInt8(ascii: "/") { return String(decoding: target, as: UTF8.self) }
        if target.elementsEqual("*".utf8) { return method == "OPTIONS" ? "*" : nil }
        let text = String(decoding: target, as: UTF8.self)
        for scheme in ["http://", "https://"] where text.lowercased().hasPrefix(scheme) {
            let rest = text.dropFirst(scheme.count)
            guard let first = rest.first, first != "/", first != "?" else { return nil }
            guard let start = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) else { return "/" }
            let tail = rest[start...]
            return tail.first == "?" ? "/" + tail : String(tail)
        }
        return nil
    }
}
