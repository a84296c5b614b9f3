import Testing
import StoreRelayNet

/// Every input gives the same outcome however its bytes are split (swift-nio's
/// ByteToMessageDecoderVerifier habit).
@Suite struct ParserChunkingTests {
    static let limits = HTTPRequestParser.Limits(maxHeaderBytes: 256, maxBodyBytes: 64)

    static let corpus: [String] = [
        "GET / HTTP/1.1\r\nHost: a\r\n\r\n",
        "GET /p?q=1&r=%20 HTTP/1.1\r\nHost: a\r\nX-Empty:\r\nX-Pad:   v  \r\n\r\n",
        "POST /upload HTTP/1.1\r\nHost: a\r\nContent-Length: 11\r\n\r\nhello world",
        "POST /c HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6;name=val;q=\"x y\"\r\n world\r\n0\r\nX-Trailer: t\r\n\r\n",
        "POST /c HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nA\r\n0123456789\r\n0\r\n\r\n",
        "POST /e HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\nabc",
        "GET /a HTTP/1.1\r\nHost: a\r\n\r\nPOST /b HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\nhiGET /c HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
        "GET /old HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /old2 HTTP/1.0\r\n\r\n",
        "\r\n\r\nGET /after-blank-lines HTTP/1.1\r\nHost: a\r\n\r\n",
        "GET http://example.com/abs?x=1 HTTP/1.1\r\nHost: example.com\r\n\r\n",
        "OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: a\r\n\r\nGET /partial HTTP/1.1\r\nHo",
        "POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\nonly5",
        // Malformed and over-limit inputs must fail the same way in every chunking.
        "GET / HTTP/1.1\nHost: a\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: a\rX\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\nabc",
        "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcX\r\n0\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n30\r\n" + String(repeating: "a", count: 48) + "\r\n30\r\n",
        "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 65\r\n\r\nabc",
        "GET / HTTP/1.1\r\nHost: a\r\nX-Big: " + String(repeating: "b", count: 300) + "\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: a\r\nX-Big: " + String(repeating: "b", count: 240) + "\nmore\r\n\r\n",
    ]

    @Test("same outcome for every chunking", arguments: corpus.indices)
    func chunkingDoesNotMatter(index: Int) {
        let bytes = Array(Self.corpus[index].utf8)
        let reference = ParserHarness.parse([bytes], limits: Self.limits)
        for (name, chunks) in ParserHarness.chunkings(of: bytes) {
            let outcome = ParserHarness.parse(chunks, limits: Self.limits)
            #expect(outcome == reference, "input \(index), \(name): \(outcome) vs \(reference)")
        }
    }

    @Test func corpusOutcomesAreTheExpectedOnes() throws {
        func outcome(_ index: Int) -> ParseOutcome { ParserHarness.parse(Self.corpus[index], limits: Self.limits) }
        #expect(outcome(0).requests.map(\.path) == ["/"])
        let query = try #require(outcome(1).requests.first)
        #expect(query.path == "/p" && query.query == "q=1&r=%20")
        #expect(query.headers["x-pad"] == "v" && query.headers["X-EMPTY"] == "")
        #expect(outcome(2).requests.first?.body == Array("hello world".utf8))
        let chunked = try #require(outcome(3).requests.first)
        #expect(chunked.body == Array("hello world".utf8))
        #expect(chunked.trailers["x-trailer"] == "t")
        #expect(outcome(4).requests.first?.body == Array("0123456789".utf8))
        #expect(outcome(5).events.first == .continueExpected)
        #expect(outcome(5).requests.first?.body == Array("abc".utf8))
        let pipelined = outcome(6).requests
        #expect(pipelined.map(\.path) == ["/a", "/b", "/c"])
        #expect(pipelined.map(\.keepAlive) == [true, true, false])
        #expect(outcome(7).requests.map(\.keepAlive) == [true, false])
        #expect(outcome(8).requests.first?.path == "/after-blank-lines")
        #expect(outcome(9).requests.first.map { ($0.path, $0.query) } ?? ("", nil) == ("/abs", "x=1"))
        #expect(outcome(10).requests.first?.path == "*")
        #expect(outcome(11).requests.count == 1 && outcome(11).partial)
        #expect(outcome(12).requests.isEmpty && outcome(12).partial && outcome(12).error == nil)
        let expectedErrors: [HTTPParseError.Code] = [
            .missingCRLF, .missingCRLF, .obsoleteLineFolding, .contentLengthWithTransferEncoding,
            .invalidChunkSize, .missingChunkCRLF, .bodyTooLarge, .bodyTooLarge, .headersTooLarge, .headersTooLarge,
        ]
        for (offset, code) in expectedErrors.enumerated() {
            #expect(outcome(13 + offset).error?.code == code, "input \(13 + offset)")
        }
    }
}
