import Testing
import StoreRelayNet

@Suite struct ParserLimitTests {
    static let limits = HTTPRequestParser.Limits(maxHeaderBytes: 100, maxBodyBytes: 10)

    @Test func headExactlyAtTheLimitIsAccepted() {
        let prefix = "GET / HTTP/1.1\r\nHost: a\r\nX: "
        let head = prefix + String(repeating: "v", count: 100 - prefix.utf8.count - 4) + "\r\n\r\n"
        #expect(head.utf8.count == 100)
        #expect(ParserHarness.parse(head, limits: Self.limits).requests.count == 1)
        let over = prefix + String(repeating: "v", count: 100 - prefix.utf8.count - 3) + "\r\n\r\n"
        #expect(ParserHarness.parse(over, limits: Self.limits).error?.code == .headersTooLarge)
    }

    @Test func endlessHeadFailsWithoutItsEnd() throws {
        let error = try #require(ParserHarness.parse("GET / HTTP/1.1\r\nX: " + String(repeating: "a", count: 200), limits: Self.limits).error)
        #expect(error.code == .headersTooLarge)
        #expect(error.response.status == 431)
        #expect(String(decoding: error.response.body, as: UTF8.self).contains("\"headers_too_large\""))
    }

    @Test func endlessBlankLinesCountTowardsTheHeadLimit() {
        #expect(ParserHarness.parse(String(repeating: "\r\n", count: 60), limits: Self.limits).error?.code == .headersTooLarge)
    }

    @Test func contentLengthOverLimitFailsBeforeAnyBodyByte() throws {
        var parser = HTTPRequestParser(limits: Self.limits)
        parser.feed(Array("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 11\r\n\r\n".utf8))
        let error = try #require(throws: HTTPParseError.self) { try parser.next() }
        #expect(error.code == .bodyTooLarge)
        #expect(error.response.status == 413)
        #expect(String(decoding: error.response.body, as: UTF8.self).contains("\"too_large\""))
    }

    @Test func hugeContentLengthIsTooLargeNotAnOverflow() {
        let input = "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999999999999999999\r\n\r\n"
        #expect(ParserHarness.parse(input, limits: Self.limits).error?.code == .bodyTooLarge)
    }

    @Test func contentLengthAtLimitIsAccepted() {
        let input = "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 10, 10\r\n\r\n0123456789"
        #expect(ParserHarness.parse(input, limits: Self.limits).requests.first?.body.count == 10)
    }

    @Test func chunkedBodyFailsAsSoonAsTheTotalWouldExceed() {
        var parser = HTTPRequestParser(limits: Self.limits)
        parser.feed(Array("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n8\r\n01234567\r\n".utf8))
        #expect((try? parser.next()) == nil)
        parser.feed(Array("3\r\n".utf8))
        #expect(throws: HTTPParseError.self) { try parser.next() }
        let hugeChunk = "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFFFFFFFFFF\r\n"
        #expect(ParserHarness.parse(hugeChunk, limits: Self.limits).error?.code == .bodyTooLarge)
    }

    @Test func expectContinueOnlyWhenABodyIsComing() {
        let withBody = "POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n"
        #expect(ParserHarness.parse(withBody).events == [.continueExpected])
        let noBody = "POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 0\r\n\r\n"
        #expect(ParserHarness.parse(noBody).events.first != .continueExpected)
        let tooBig = "POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 11\r\n\r\n"
        let outcome = ParserHarness.parse(tooBig, limits: Self.limits)
        #expect(outcome.events.isEmpty && outcome.error?.code == .bodyTooLarge)
    }

    @Test func keepAliveFollowsVersionAndConnection() {
        let cases: [(String, Bool)] = [
            ("GET / HTTP/1.1\r\nHost: a\r\n\r\n", true),
            ("GET / HTTP/1.1\r\nHost: a\r\nConnection: Upgrade, Close\r\n\r\n", false),
            ("GET / HTTP/1.0\r\n\r\n", false),
            ("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", true),
        ]
        for (input, keepAlive) in cases {
            #expect(ParserHarness.parse(input).requests.first?.keepAlive == keepAlive, "\(input)")
        }
    }
}
