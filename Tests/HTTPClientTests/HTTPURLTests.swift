@testable import StoreRelayNet
import Testing

@Suite struct HTTPURLTests {
    @Test func parsesTheParts() throws {
        let plain = try HTTPURL("http://Example.COM/a/b?x=1")
        #expect(plain.scheme == .http && plain.host == "example.com" && plain.port == 80)
        #expect(plain.pathAndQuery == "/a/b?x=1" && plain.hostHeader == "example.com")
        let secure = try HTTPURL("https://billing.internal:8443")
        #expect(secure.port == 8443 && secure.pathAndQuery == "/" && secure.hostHeader == "billing.internal:8443")
        let query = try HTTPURL("http://h?q=1")
        #expect(query.pathAndQuery == "/?q=1")
        let v6 = try HTTPURL("https://[::1]:9000/hook")
        #expect(v6.host == "::1" && v6.port == 9000 && v6.isIPLiteral && v6.hostHeader == "[::1]:9000")
        #expect(try HTTPURL("http://127.0.0.1/").isIPLiteral)
    }

    @Test(arguments: [
        "ftp://h/", "http//h", "http://", "http://user:pw@h/", "http://h:0/", "http://h:70000/",
        "http://[::1/", "http://[nothex]/", "http://h/a b", "http://h\u{e9}/", "http://h:1:2/", "http://h/a#frag",
        "http://under_score/", "http://-h/", "http://1.2.3.256/", "http://[::1]x/",
    ])
    func rejects(_ text: String) {
        #expect(throws: HTTPClientError.self) { _ = try HTTPURL(text) }
    }

    @Test func requestSerialization() throws {
        let request = try HTTPClientRequest(
            method: "POST", url: "http://[::1]:8080/hook?a=1",
            headers: ["X-Team": "billing", "Content-Length": "999"], body: Array("{}".utf8))
        let text = String(decoding: try request.serialized(), as: UTF8.self)
        #expect(text == "POST /hook?a=1 HTTP/1.1\r\nHost: [::1]:8080\r\nX-Team: billing\r\nContent-Length: 2\r\n\r\n{}")
        let injected = HTTPClientRequest(url: try HTTPURL("http://h/"), headers: ["X": "a\r\nEvil: 1"])
        #expect(throws: HTTPClientError.self) { _ = try injected.serialized() }
        let badName = HTTPClientRequest(url: try HTTPURL("http://h/"), headers: ["Bad Name": "1"])
        #expect(throws: HTTPClientError.self) { _ = try badName.serialized() }
    }
}
