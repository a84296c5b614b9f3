import FuzzSupport
import StoreRelayNet

/// libFuzzer target for `HTTPResponseParser`: arbitrary bytes as a downstream's answer to a
/// webhook (a hostile or broken receiver). The first byte picks whether the request was a
/// HEAD; the rest is the stream, parsed fed at once, one byte at a time and in chunks whose
/// lengths come from a generator seeded with the input's hash, with the client's limits and
/// with tiny ones. Every way must give the same verdict, since the parser (and the decoder
/// it shares with the server) promises that chunking never matters.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTPResponse(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = fuzzInput(data, size)
    guard let first = input.first else { return 0 }
    let isHead = first & 1 == 1
    let stream = Array(input.dropFirst())
    var random = SplitMix64(hashing: input)
    let limitChoices = [
        HTTPResponseParser.Limits(),
        HTTPResponseParser.Limits(maxHeaderBytes: 32 + Int(random.next() % 64), maxBodyBytes: Int(random.next() % 32)),
    ]
    for limits in limitChoices {
        let whole = ResponseRun(stream, limits: limits, isHead: isHead, chunkLengths: { Int.max })
        let bytewise = ResponseRun(stream, limits: limits, isHead: isHead, chunkLengths: { 1 })
        let bound = random.length(upTo: 64)
        let split = ResponseRun(stream, limits: limits, isHead: isHead, chunkLengths: { random.length(upTo: bound) })
        fuzzCheck(whole.verdict == bytewise.verdict, "one byte at a time: \(bytewise.verdict), at once: \(whole.verdict)")
        fuzzCheck(whole.verdict == split.verdict, "chunks of 1...\(bound): \(split.verdict), at once: \(whole.verdict)")
    }
    return 0
}

/// One pass over a response stream, then the end of the connection if it was not complete.
struct ResponseRun {
    enum Verdict: Equatable, CustomStringConvertible {
        case response(status: Int, body: [UInt8], reusable: Bool)
        case error(HTTPParseError.Code)

        var description: String {
            switch self {
            case .response(let status, let body, let reusable): "\(status) body \(body.count) reusable \(reusable)"
            case .error(let code): "error \(code)"
            }
        }
    }

    private(set) var verdict: Verdict

    init(_ stream: [UInt8], limits: HTTPResponseParser.Limits, isHead: Bool, chunkLengths: () -> Int) {
        var parser = HTTPResponseParser(limits: limits, isHeadRequest: isHead)
        var offset = 0
        do {
            while offset < stream.count {
                let end = offset + min(chunkLengths(), stream.count - offset)
                let outcome = try parser.consume(stream[offset..<end])
                offset = end
                if case .complete(let response, let reusable) = outcome {
                    verdict = .response(status: response.status, body: response.body, reusable: reusable && offset == stream.count)
                    Self.check(response, limits: limits, isHead: isHead)
                    return
                }
            }
            let response = try parser.endOfStream()
            Self.check(response, limits: limits, isHead: isHead)
            verdict = .response(status: response.status, body: response.body, reusable: false)
        } catch {
            verdict = .error(error.code)
            // Final: whatever follows, the same error.
            do {
                _ = try parser.consume("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n".utf8)
                fuzzCheck(false, "after \(error.code) the parser accepted a response")
            } catch let again {
                fuzzCheck(again.code == error.code, "\(again.code) thrown after \(error.code)")
            }
        }
    }

    /// Facts every response handed out must satisfy, whatever the bytes.
    private static func check(_ response: HTTPResponse, limits: HTTPResponseParser.Limits, isHead: Bool) {
        fuzzCheck((200...999).contains(response.status), "status \(response.status) handed out (1xx are interim)")
        fuzzCheck(response.body.count <= limits.maxBodyBytes,
                  "a body of \(response.body.count) bytes passed the limit of \(limits.maxBodyBytes)")
        if isHead || response.status == 204 || response.status == 304 {
            fuzzCheck(response.body.isEmpty, "a body in a response that has none")
        }
    }
}
