
/// A complete response as the client received it: status, reason, headers (case-insensitive
/// lookup) and the whole body. The same type the server writes, parsed by the same codec.
public typealias HTTPClientResponse = HTTPResponse

extension HTTPClientError {
    /// The codec's verdict on a response in the client's terms: too large a body is its own
    /// code (the cap is ours, not the server's fault), a response cut short is an I/O failure
    /// (the connection broke), anything else a protocol error.
    init(response error: HTTPParseError) {
        switch error.code {
        case .bodyTooLarge: self.init(.responseTooLarge, "response body too large: \(error.detail)")
        case .truncated: self.init(.io, error.detail)
        default: self.init(.protocol, "malformed response: \(error.detail)")
        }
    }
}
