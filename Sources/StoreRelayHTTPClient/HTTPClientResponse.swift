public import StoreRelayHTTP

/// A complete response: status, headers (case-insensitive lookup) and the whole body.
public struct HTTPClientResponse: Sendable {
    public var status: Int
    public var reason: String
    public var headers: HTTPHeaders
    public var body: [UInt8]

    public init(status: Int, reason: String = "", headers: HTTPHeaders = [:], body: [UInt8] = []) {
        self.status = status
        self.reason = reason
        self.headers = headers
        self.body = body
    }
}
