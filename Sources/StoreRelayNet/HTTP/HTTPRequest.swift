/// One complete HTTP request, head and body, as the parser hands it to the server.
public struct HTTPRequest: Sendable, Equatable {
    /// The method token exactly as sent (methods are case-sensitive, RFC 9110 §9.1).
    public var method: String
    /// The request target as sent, for logs.
    public var target: String
    /// The path part of the target (before `?`), not percent-decoded. An absolute-form target
    /// (`http://host/p`) is reduced to its path; `*` (OPTIONS) stays `*`.
    public var path: String
    /// The query after `?`, not decoded; nil when the target has no `?`.
    public var query: String?
    public var version: HTTPVersion
    public var headers: HTTPHeaders
    /// Trailer fields of a chunked body (RFC 9112 §7.1.2); empty otherwise.
    public var trailers: HTTPHeaders
    public var body: [UInt8]
    /// Whether the connection stays open after this request: HTTP/1.1 unless `Connection:
    /// close`, HTTP/1.0 only with `Connection: keep-alive` (RFC 9112 §9.3).
    public var keepAlive: Bool
    /// The peer as `ip:port` (`[ip]:port` for IPv6); set by the server, nil from the parser.
    public var remoteAddress: String?
    /// The peer's IP address alone (`1.2.3.4`, `::1`), for limits kept per client; set by
    /// the server, nil from the parser.
    public var remoteHost: String?

    public init(
        method: String, target: String, version: HTTPVersion = .http1_1,
        headers: HTTPHeaders = [:], trailers: HTTPHeaders = [:], body: [UInt8] = [],
        keepAlive: Bool = true, remoteAddress: String? = nil
    ) {
        self.method = method
        self.target = target
        if let mark = target.firstIndex(of: "?") {
            path = String(target[..<mark])
            query = String(target[target.index(after: mark)...])
        } else {
            path = target
            query = nil
        }
        self.version = version
        self.headers = headers
        self.trailers = trailers
        self.body = body
        self.keepAlive = keepAlive
        self.remoteAddress = remoteAddress
    }

    /// `HEAD` requests are answered like `GET` minus the body.
    public var isHead: Bool { method == "HEAD" }
}
