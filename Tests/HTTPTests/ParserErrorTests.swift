import Testing
import StoreRelayNet

/// One case per class of malformed input, each mapped to its error code and HTTP status.
@Suite struct ParserErrorTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let input: String
        let code: HTTPParseError.Code
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "request line with two parts", input: "GET /\r\nHost: a\r\n\r\n", code: .invalidRequestLine),
        Case(name: "double space in request line", input: "GET  / HTTP/1.1\r\nHost: a\r\n\r\n", code: .invalidRequestLine),
        Case(name: "method not a token", input: "G(T / HTTP/1.1\r\nHost: a\r\n\r\n", code: .invalidMethod),
        Case(name: "target not origin-form", input: "GET foo HTTP/1.1\r\nHost: a\r\n\r\n", code: .invalidTarget),
        Case(name: "target with control byte", input: "GET /a\u{7F}b HTTP/1.1\r\nHost: a\r\n\r\n", code: .invalidTarget),
        Case(name: "target with fragment", input: "GET /a#b HTTP/1.1\r\nHost: a\r\n\r\n", code: .invalidTarget),
        Case(name: "asterisk outside OPTIONS", input: "GET * HTTP/1.1\r\nHost: a\r\n\r\n", code: .invalidTarget),
        Case(name: "authority-form", input: "CONNECT a.com:443 HTTP/1.1\r\nHost: a\r\n\r\n", code: .invalidTarget),
        Case(name: "HTTP/2.0 version", input: "GET / HTTP/2.0\r\nHost: a\r\n\r\n", code: .invalidVersion),
        Case(name: "lowercase version", input: "GET / http/1.1\r\nHost: a\r\n\r\n", code: .invalidVersion),
        Case(name: "space before colon", input: "GET / HTTP/1.1\r\nHost : a\r\n\r\n", code: .invalidHeaderName),
        Case(name: "header without colon", input: "GET / HTTP/1.1\r\nHost: a\r\nNoColon\r\n\r\n", code: .invalidHeaderName),
        Case(name: "empty header name", input: "GET / HTTP/1.1\r\nHost: a\r\n: v\r\n\r\n", code: .invalidHeaderName),
        Case(name: "control byte in value", input: "GET / HTTP/1.1\r\nHost: a\r\nX: a\u{01}b\r\n\r\n", code: .invalidHeaderValue),
        Case(name: "NUL in value", input: "GET / HTTP/1.1\r\nHost: a\r\nX: a\u{00}b\r\n\r\n", code: .invalidHeaderValue),
        Case(name: "obs-fold with space", input: "GET / HTTP/1.1\r\nHost: a\r\nX: a\r\n b\r\n\r\n", code: .obsoleteLineFolding),
        Case(name: "obs-fold with tab", input: "GET / HTTP/1.1\r\nHost: a\r\nX: a\r\n\tb\r\n\r\n", code: .obsoleteLineFolding),
        Case(name: "bare LF ending a header", input: "GET / HTTP/1.1\r\nHost: a\n\r\n", code: .missingCRLF),
        Case(name: "bare CR inside a line", input: "GET / HTTP/1.1\r\nHost: a\rb\r\n\r\n", code: .missingCRLF),
        Case(name: "missing Host on 1.1", input: "GET / HTTP/1.1\r\nX: y\r\n\r\n", code: .missingHost),
        Case(name: "two Host fields", input: "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", code: .multipleHosts),
        Case(name: "Content-Length not a number", input: "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 12a\r\n\r\n", code: .invalidContentLength),
        Case(name: "negative Content-Length", input: "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n", code: .invalidContentLength),
        Case(name: "empty Content-Length", input: "POST / HTTP/1.1\r\nHost: a\r\nContent-Length:\r\n\r\n", code: .invalidContentLength),
        Case(name: "conflicting Content-Length fields",
             input: "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd", code: .conflictingContentLength),
        Case(name: "conflicting Content-Length list", input: "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3, 4\r\n\r\nabcd",
             code: .conflictingContentLength),
        Case(name: "Content-Length and Transfer-Encoding",
             input: "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", code: .contentLengthWithTransferEncoding),
        Case(name: "gzip transfer coding", input: "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
             code: .unsupportedTransferEncoding),
        Case(name: "chunked twice", input: "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
             code: .unsupportedTransferEncoding),
        Case(name: "Transfer-Encoding on HTTP/1.0", input: "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n",
             code: .unsupportedTransferEncoding),
        Case(name: "chunk size not hex", input: "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nxyz\r\n",
             code: .invalidChunkSize),
        Case(name: "chunk size empty", input: "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n\r\n",
             code: .invalidChunkSize),
        Case(name: "chunk size line endless",
             input: "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n1" + String(repeating: " ", count: 5000),
             code: .invalidChunkSize),
        Case(name: "chunk extension garbage", input: "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3 x\r\nabc\r\n",
             code: .invalidChunkExtension),
        Case(name: "chunk extension unterminated quote",
             input: "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3;a=\"b\r\nabc\r\n", code: .invalidChunkExtension),
        Case(name: "chunk data without CRLF", input: "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcd\r\n",
             code: .missingChunkCRLF),
        Case(name: "chunk line with bare LF", input: "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\nabc\r\n",
             code: .missingCRLF),
        Case(name: "trailer with obs-fold",
             input: "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX: y\r\n z\r\n\r\n", code: .obsoleteLineFolding),
    ]

    @Test("malformed input is rejected with 400", arguments: cases)
    func malformed(_ testCase: Case) throws {
        let outcome = ParserHarness.parse(testCase.input)
        let error = try #require(outcome.error)
        #expect(error.code == testCase.code, "\(error)")
        #expect(error.response.status == 400)
        #expect(outcome.requests.isEmpty)
    }

    @Test func errorsAreSticky() {
        var parser = HTTPRequestParser()
        parser.feed(Array("GET / HTTP/9.9\r\n\r\n".utf8))
        #expect(throws: HTTPParseError.self) { try parser.next() }
        parser.feed(Array("GET / HTTP/1.1\r\nHost: a\r\n\r\n".utf8))
        #expect(throws: HTTPParseError.self) { try parser.next() }
    }

    @Test func errorResponseIsJSONWithCode() throws {
        let error = try #require(ParserHarness.parse("GET / HTTP/1.1\r\n\r\n").error)
        let response = error.response
        #expect(response.headers["Content-Type"] == "application/json")
        #expect(String(decoding: response.body, as: UTF8.self).hasPrefix("{\"error\":\"malformed\",\"message\":\""))
    }
}
