
/// One HTTP/1.1 request: method, URL, ordered headers and a body sent with `Content-Length`.
public struct HTTPClientRequest: Sendable {
    public var method: String
    public var url: HTTPURL
    /// Sent in order. `Host` is added when absent; `Content-Length` is always computed here.
    public var headers: HTTPHeaders
    public var body: [UInt8]
    /// A PEM file of extra CAs trusted for this request's HTTPS server, besides the system store
    /// (the destination's `ca-file`).
    public var extraCAFile: String?

    public init(
        method: String = "GET", url: HTTPURL, headers: HTTPHeaders = [:],
        body: [UInt8] = [], extraCAFile: String? = nil
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.extraCAFile = extraCAFile
    }

    /// Parses `url` first; fails with `.invalidRequest` when it is not an http(s) URL.
    public init(
        method: String = "GET", url: String, headers: HTTPHeaders = [:],
        body: [UInt8] = [], extraCAFile: String? = nil
    ) throws(HTTPClientError) {
        self.init(method: method, url: try HTTPURL(url), headers: headers, body: body, extraCAFile: extraCAFile)
    }

    /// The bytes on the wire: request line, headers, blank line, body (RFC 9112 §3, §6.2).
    /// Refuses names and values that would let a header inject another.
    func serialized() throws(HTTPClientError) -> [UInt8] {
        guard !method.isEmpty, HTTPSyntax.isToken(method.utf8) else {
            throw HTTPClientError(.invalidRequest, "invalid method \(method)")
        }
        var head = "\(method) \(url.pathAndQuery) HTTP/1.1\r\n"
        if !headers.contains("Host") { head += "Host: \(url.hostHeader)\r\n" }
        for field in headers {
            guard HTTPSyntax.isToken(field.name.utf8) else {
                throw HTTPClientError(.invalidRequest, "invalid header name \(field.name)")
            }
            guard !field.value.utf8.contains(where: { $0 == 13 || $0 == 10 || $0 == 0 }) else {
                throw HTTPClientError(.invalidRequest, "invalid value for header \(field.name)")
            }
            if HTTPSyntax.equalsIgnoringCase(field.name, "Content-Length")
                || HTTPSyntax.equalsIgnoringCase(field.name, "Transfer-Encoding") { continue }
            head += "\(field.name): \(field.value)\r\n"
        }
        if !body.isEmpty || ["POST", "PUT", "PATCH"].contains(method) {
            head += "Content-Length: \(body.count)\r\n"
        }
        head += "\r\n"
        return Array(head.utf8) + body
    }

    var isHead: Bool { method == "HEAD" }
}
