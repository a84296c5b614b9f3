/// Parses one HTTP/1.1 response from bytes as they arrive (RFC 9112): status line, headers,
/// then a body framed by Content-Length, chunked coding, or the end of the connection.
/// A pure state machine: no I/O, the same result for any split of the input.
struct HTTPResponseParser {
    struct Limits: Sendable {
        var maxHeaderBytes = 64 * 1024
        var maxBodyBytes = 8 * 1024 * 1024
    }

    enum Outcome {
        case needMore
        /// `reusable`: the connection may carry another request (keep-alive, nothing left over).
        case complete(HTTPClientResponse, reusable: Bool)
    }

    private enum State {
        case head
        case fixedBody(remaining: Int)
        case chunkSize
        case chunkData(remaining: Int)
        case chunkDataEnd
        case trailers
        case untilClose
        case done
    }

    private let limits: Limits
    private let isHeadRequest: Bool
    private var state = State.head
    private var buffer: [UInt8] = []
    private var cursor = 0
    private var headBytes = 0
    private var response = HTTPClientResponse(status: 0)
    private var keepAlive = true
    private var isHTTP11 = true
    /// True once any byte arrived: a connection closed before that is a "stale keep-alive".
    private(set) var hasReceivedBytes = false

    init(limits: Limits = Limits(), isHeadRequest: Bool = false) {
        self.limits = limits
        self.isHeadRequest = isHeadRequest
    }

    mutating func consume(_ bytes: some Collection<UInt8>) throws(HTTPClientError) -> Outcome {
        if !bytes.isEmpty { hasReceivedBytes = true }
        if cursor > 0 && cursor == buffer.count { buffer.removeAll(keepingCapacity: true); cursor = 0 }
        buffer.append(contentsOf: bytes)
        while true {
            switch state {
            case .head:
                guard let line = try nextLine(countingTowardsHead: true) else { return .needMore }
                try headLine(line)
            case .fixedBody(let remaining):
                let take = min(remaining, buffer.count - cursor)
                response.body.append(contentsOf: buffer[cursor..<cursor + take])
                cursor += take
                if remaining - take > 0 { state = .fixedBody(remaining: remaining - take); return .needMore }
                state = .done
            case .chunkSize:
                guard let line = try nextLine(countingTowardsHead: false) else { return .needMore }
                let hex = line.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false)[0].trimmingSpaces
                guard !hex.isEmpty, hex.count <= 15, let size = Int(hex, radix: 16) else {
                    throw malformed("bad chunk size \(line.prefix(40))")
                }
                try checkBodySize(response.body.count + size)
                state = size == 0 ? .trailers : .chunkData(remaining: size)
            case .chunkData(let remaining):
                let take = min(remaining, buffer.count - cursor)
                response.body.append(contentsOf: buffer[cursor..<cursor + take])
                cursor += take
                if remaining - take > 0 { state = .chunkData(remaining: remaining - take); return .needMore }
                state = .chunkDataEnd
            case .chunkDataEnd:
                guard let line = try nextLine(countingTowardsHead: false) else { return .needMore }
                guard line.isEmpty else { throw malformed("chunk not followed by CRLF") }
                state = .chunkSize
            case .trailers:
                guard let line = try nextLine(countingTowardsHead: true) else { return .needMore }
                if line.isEmpty { state = .done }
            case .untilClose:
                try checkBodySize(response.body.count + buffer.count - cursor)
                response.body.append(contentsOf: buffer[cursor...])
                cursor = buffer.count
                return .needMore
            case .done:
                // Bytes after the response were never asked for: do not reuse the connection.
                return .complete(response, reusable: keepAlive && cursor == buffer.count)
            }
        }
    }

    /// The connection ended: completes a read-until-close body, else reports what is missing.
    mutating func endOfStream() throws(HTTPClientError) -> HTTPClientResponse {
        switch state {
        case .untilClose, .done:
            state = .done
            return response
        case .head where !hasReceivedBytes:
            throw HTTPClientError(.io, "connection closed before any response")
        default:
            throw HTTPClientError(.io, "connection closed before the response was complete")
        }
    }

    // MARK: Head

    private mutating func headLine(_ line: Substring) throws(HTTPClientError) {
        if response.status == 0 {
            try statusLine(line)
        } else if !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else { throw malformed("header line without a colon") }
            let name = line[..<colon]
            guard !name.isEmpty, name.utf8.allSatisfy(HTTPClientRequest.isTokenByte) else {
                throw malformed("bad header name \(name.prefix(40))")
            }
            response.headers.add(name: String(name), value: String(line[line.index(after: colon)...].trimmingSpaces))
        } else {
            try endOfHead()
        }
    }

    private mutating func statusLine(_ line: Substring) throws(HTTPClientError) {
        let parts = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count >= 2, parts[0] == "HTTP/1.1" || parts[0] == "HTTP/1.0",
              parts[1].count == 3, parts[1].allSatisfy(\.isASCII), let status = Int(parts[1]), status >= 100
        else { throw malformed("bad status line \(line.prefix(60))") }
        response.status = status
        response.reason = parts.count == 3 ? String(parts[2]) : ""
        isHTTP11 = parts[0] == "HTTP/1.1"
    }

    /// Chooses the body framing, in the order of RFC 9112 §6.3.
    private mutating func endOfHead() throws(HTTPClientError) {
        let headers = response.headers
        if (100..<200).contains(response.status) {
            guard response.status != 101 else { throw malformed("unexpected protocol switch") }
            response = HTTPClientResponse(status: 0)  // interim response: the real one follows
            return
        }
        // HTTP/1.1 persists unless told to close; HTTP/1.0 only when asked (RFC 9112 §9.3).
        keepAlive = isHTTP11
            ? !headers.hasToken("close", in: "Connection")
            : headers.hasToken("keep-alive", in: "Connection")
        if isHeadRequest || response.status == 204 || response.status == 304 {
            state = .done
        } else if headers.contains("Transfer-Encoding") {
            let codings = headers.values(for: "Transfer-Encoding").joined(separator: ",").split(separator: ",")
            if codings.last.map({ HTTPClientHeaders.sameName($0.trimmingSpaces, "chunked") }) == true {
                state = .chunkSize
            } else {
                state = .untilClose
                keepAlive = false
            }
        } else if let lengthText = headers["Content-Length"] {
            let lengths = Set(headers.values(for: "Content-Length").flatMap { $0.split(separator: ",") }.map { $0.trimmingSpaces })
            guard lengths.count == 1, let length = Int(lengthText.trimmingSpaces), length >= 0,
                  lengthText.trimmingSpaces.allSatisfy(\.isNumber)
            else { throw malformed("bad Content-Length \(lengthText.prefix(40))") }
            try checkBodySize(length)
            state = length == 0 ? .done : .fixedBody(remaining: length)
        } else {
            state = .untilClose
            keepAlive = false
        }
    }

    // MARK: Helpers

    /// The next line without its CRLF (a bare LF is tolerated), or nil until one is complete.
    private mutating func nextLine(countingTowardsHead: Bool) throws(HTTPClientError) -> Substring? {
        guard let newline = buffer[cursor...].firstIndex(of: 10) else {
            if countingTowardsHead && headBytes + buffer.count - cursor > limits.maxHeaderBytes {
                throw malformed("response head larger than \(limits.maxHeaderBytes) bytes")
            }
            if !countingTowardsHead && buffer.count - cursor > 1024 { throw malformed("chunk line too long") }
            return nil
        }
        var end = newline
        if end > cursor && buffer[end - 1] == 13 { end -= 1 }
        let line = buffer[cursor..<end]
        if countingTowardsHead {
            headBytes += newline + 1 - cursor
            if headBytes > limits.maxHeaderBytes { throw malformed("response head larger than \(limits.maxHeaderBytes) bytes") }
        }
        cursor = newline + 1
        guard !line.contains(where: { $0 == 0 || $0 == 13 }) else { throw malformed("control character in a line") }
        return Substring(decoding: line, as: UTF8.self)
    }

    private func checkBodySize(_ size: Int) throws(HTTPClientError) {
        if size > limits.maxBodyBytes {
            throw HTTPClientError(.responseTooLarge, "response body larger than \(limits.maxBodyBytes) bytes")
        }
    }

    private func malformed(_ why: String) -> HTTPClientError {
        HTTPClientError(.protocol, "malformed response: \(why)")
    }
}
