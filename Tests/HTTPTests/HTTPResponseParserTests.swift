import StoreRelayNet
import Testing

/// The response parser without I/O, fed every chunking of each input.
@Suite struct HTTPResponseParserTests {
    /// Parses `text` fed all at once, byte by byte, and split at every offset; all must agree.
    private func parseEveryWay(
        _ text: String, limits: HTTPResponseParser.Limits = .init(), head: Bool = false, eof: Bool = false
    ) throws(HTTPParseError) -> (HTTPResponse, Bool) {
        let bytes = Array(text.utf8)
        var splits: [[ArraySlice<UInt8>]] = [[bytes[...]], bytes.indices.map { bytes[$0...$0] }]
        for offset in 1..<bytes.count { splits.append([bytes[..<offset], bytes[offset...]]) }
        var results: [(HTTPResponse, Bool)] = []
        for pieces in splits {
            var parser = HTTPResponseParser(limits: limits, isHeadRequest: head)
            var outcome: (HTTPResponse, Bool)?
            for piece in pieces where outcome == nil {
                if case .complete(let response, let reusable) = try parser.consume(piece) { outcome = (response, reusable) }
            }
            if outcome == nil && eof { outcome = (try parser.endOfStream(), false) }
            guard let outcome else { throw HTTPParseError(.truncated, "incomplete") }
            results.append(outcome)
        }
        for result in results {
            #expect(result.0.status == results[0].0.status && result.0.body == results[0].0.body && result.1 == results[0].1)
        }
        return results[0]
    }

    @Test func contentLength() throws {
        let (response, reusable) = try parseEveryWay("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-A: 1\r\nx-a: 2\r\n\r\nhello")
        #expect(response.status == 200 && response.reason == "OK")
        #expect(String(decoding: response.body, as: UTF8.self) == "hello")
        #expect(response.headers["X-A"] == "1" && response.headers.values(for: "x-A") == ["1", "2"])
        #expect(reusable)
    }

    @Test func chunkedWithExtensionsAndTrailers() throws {
        let text = "HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n7\r\n, world\r\n0\r\nTrailer: x\r\n\r\n"
        let (response, reusable) = try parseEveryWay(text)
        #expect(response.status == 201 && String(decoding: response.body, as: UTF8.self) == "hello, world")
        #expect(reusable)
    }

    @Test func readUntilCloseIsNeverReusable() throws {
        let (response, reusable) = try parseEveryWay("HTTP/1.1 200 OK\r\n\r\nstreamed body", eof: true)
        #expect(String(decoding: response.body, as: UTF8.self) == "streamed body" && !reusable)
    }

    @Test func interimResponsesAreSkippedAndHeadHasNoBody() throws {
        let (response, _) = try parseEveryWay("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n")
        #expect(response.status == 204 && response.body.isEmpty)
        let (head, reusable) = try parseEveryWay("HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n", head: true)
        #expect(head.body.isEmpty && reusable)
    }

    @Test func connectionHeaderDecidesReuse() throws {
        #expect(try !parseEveryWay("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n").1)
        #expect(try !parseEveryWay("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n").1)
        #expect(try parseEveryWay("HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 0\r\n\r\n").1)
        var parser = HTTPResponseParser()
        guard case .complete(_, let reusable) = try parser.consume(Array("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nab".utf8)) else {
            Issue.record("incomplete")
            return
        }
        #expect(!reusable, "bytes after the response")
    }

    @Test(arguments: [
        "HTTP/2 200 OK\r\n\r\n", "HTTP/1.1 2000 OK\r\n\r\n", "garbage\r\n\r\n", "HTTP/1.1 200 OK\r\nNo colon\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "HTTP/1.1 200 OK\r\n folded: x\r\n\r\n",
        "HTTP/1.1 200 OK\nContent-Length: 0\n\n", "HTTP/1.1 200 OK\r\nX: a\rb\r\n\r\n", "HTTP/1.1 101 Switching\r\n\r\n",
    ])
    func malformedResponsesAreRefused(_ text: String) throws {
        var parser = HTTPResponseParser()
        let error = try #require(throws: HTTPParseError.self) { _ = try parser.consume(Array(text.utf8)) }
        #expect(error.code != .bodyTooLarge && error.code != .truncated)
        // Final: the same verdict again, whatever follows.
        #expect(throws: HTTPParseError.self) { _ = try parser.consume(Array("HTTP/1.1 200 OK\r\n\r\n".utf8)) }
    }

    @Test func limits() throws {
        let limits = HTTPResponseParser.Limits(maxHeaderBytes: 100, maxBodyBytes: 10)
        for text in ["HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\n",
                     "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nhello \r\n6\r\nworld!\r\n0\r\n\r\n",
                     "HTTP/1.1 200 OK\r\n\r\n12345678901"] {
            var parser = HTTPResponseParser(limits: limits)
            let error = try #require(throws: HTTPParseError.self) { _ = try parser.consume(Array(text.utf8)) }
            #expect(error.code == .bodyTooLarge)
        }
        var parser = HTTPResponseParser(limits: limits)
        let error = try #require(throws: HTTPParseError.self) {
            _ = try parser.consume(Array(("HTTP/1.1 200 OK\r\nX: " + String(repeating: "a", count: 200)).utf8))
        }
        #expect(error.code == .headersTooLarge)
    }

    @Test func truncatedResponses() throws {
        var parser = HTTPResponseParser()
        _ = try parser.consume(Array("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc".utf8))
        let error = try #require(throws: HTTPParseError.self) { _ = try parser.endOfStream() }
        #expect(error.code == .truncated)
        var empty = HTTPResponseParser()
        #expect(!empty.hasReceivedBytes)
        #expect(throws: HTTPParseError.self) { _ = try empty.endOfStream() }
    }
}
