import FuzzSupport
import StoreRelayNet

/// One pass of the parser over a byte stream, fed in chunks, with everything it reported.
///
/// After each chunk, `next()` is called until it returns nil or throws, as the server does.
/// An error ends the pass (the connection would be closed), after checking it is final.
struct ParseRun {
    enum Outcome: Equatable, CustomStringConvertible {
        case event(HTTPParserEvent)
        case error(HTTPParseError)

        var description: String {
            switch self {
            case .event(.continueExpected): "100-continue"
            case .event(.request(let request)): "request \(request.method) \(request.target) body \(request.body.count)"
            case .error(let error): "error \(error.code)"
            }
        }
    }

    private(set) var outcomes: [Outcome] = []
    /// The parser's view of the stream once every byte was fed; nil when it failed first.
    private(set) var finalState: FinalState?

    struct FinalState: Equatable {
        var hasPartialRequest: Bool
        var bufferedByteCount: Int
    }

    init(_ stream: [UInt8], limits: HTTPRequestParser.Limits, chunkLengths: (Int) -> Int) {
        var parser = HTTPRequestParser(limits: limits)
        var offset = 0
        while offset < stream.count {
            let end = offset + min(chunkLengths(offset), stream.count - offset)
            parser.feed(stream[offset..<end])
            offset = end
            while true {
                do {
                    guard let event = try parser.next() else { break }
                    if case .request(let request) = event { Self.checkRequest(request, limits: limits) }
                    outcomes.append(.event(event))
                } catch {
                    outcomes.append(.error(error))
                    Self.checkFinal(error, &parser)
                    return
                }
            }
        }
        finalState = FinalState(hasPartialRequest: parser.hasPartialRequest, bufferedByteCount: parser.bufferedByteCount)
    }

    /// Facts every request handed out must satisfy, whatever the bytes.
    private static func checkRequest(_ request: HTTPRequest, limits: HTTPRequestParser.Limits) {
        fuzzCheck(request.body.count <= limits.maxBodyBytes,
                  "a body of \(request.body.count) bytes passed the limit of \(limits.maxBodyBytes)")
        if let length = request.headers["Content-Length"], let expected = Int(length) {
            fuzzCheck(request.body.count == expected,
                      "Content-Length \(expected) but a body of \(request.body.count) bytes")
        }
        fuzzCheck(request.version == .http1_1 || request.version == .http1_0, "version \(request.version) accepted")
        fuzzCheck(!request.method.isEmpty && !request.path.isEmpty, "empty method or path")
    }

    /// An error is final: every later call throws it again, whatever is fed.
    private static func checkFinal(_ error: HTTPParseError, _ parser: inout HTTPRequestParser) {
        parser.feed("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
        do {
            let event = try parser.next()
            fuzzCheck(false, "after \(error.code) the parser produced \(String(describing: event))")
        } catch let again {
            fuzzCheck(again.code == error.code, "\(again.code) thrown after \(error.code)")
        }
        fuzzCheck(!parser.hasPartialRequest, "a failed parser claims a partial request")
        // The answer to the client must serialize, whatever the error.
        fuzzCheck(!error.response.serialized(close: true).isEmpty, "empty error response")
    }

    /// Fails unless `other` (the same bytes, chunked differently) reported exactly the same.
    func expectSame(as other: ParseRun, _ how: String) {
        fuzzCheck(outcomes == other.outcomes,
                  "fed \(how) the parser reported \(other.outcomes) but fed at once \(outcomes)")
        fuzzCheck(finalState == other.finalState,
                  "fed \(how) the parser ends in \(String(describing: other.finalState)), fed at once in \(String(describing: finalState))")
    }
}
