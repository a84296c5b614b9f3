@testable import StoreRelayNet
import Testing

/// How the codec's verdicts on a response become the client's error codes, which decide
/// whether a webhook attempt is retried and what its dead letter says.
@Suite struct ResponseErrorTests {
    private func clientError(after text: String, endOfStream: Bool = false, limits: HTTPResponseParser.Limits = .init()) -> HTTPClientError? {
        var parser = HTTPResponseParser(limits: limits)
        do {
            _ = try parser.consume(Array(text.utf8))
            if endOfStream { _ = try parser.endOfStream() }
            return nil
        } catch {
            return HTTPClientError(response: error)
        }
    }

    @Test func eachVerdictHasItsCode() {
        #expect(clientError(after: "HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n", limits: .init(maxBodyBytes: 10))?.code == .responseTooLarge)
        #expect(clientError(after: "HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nabc", endOfStream: true)?.code == .io)
        #expect(clientError(after: "", endOfStream: true)?.code == .io)
        let malformed = clientError(after: "HTTP/9 200 OK\r\n\r\n")
        #expect(malformed?.code == .protocol)
        #expect(malformed?.message.hasPrefix("malformed response: ") == true)
        #expect(clientError(after: "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n") == nil)
    }
}
