/// A complete response: status, headers and a body held in memory.
///
/// Framing headers are the server's business: serialization always writes its own
/// `Content-Length` (and drops any `Transfer-Encoding`), adds `Date`, and adds
/// `Connection: close` when the connection is about to close. See `HTTPResponse+Serialization`.
public struct HTTPResponse: Sendable, Equatable {
    public var status: Int
    public var reason: String
    public var headers: HTTPHeaders
    public var body: [UInt8]

    /// `reason` defaults to the standard phrase for `status`.
    public init(status: Int, reason: String? = nil, headers: HTTPHeaders = [:], body: [UInt8] = []) {
        self.status = status
        self.reason = reason ?? HTTPResponse.standardReason(for: status)
        self.headers = headers
        self.body = body
    }

    /// A response with a UTF-8 body and the given content type.
    public init(status: Int, contentType: String, body: String, headers: HTTPHeaders = [:]) {
        var headers = headers
        headers.replaceOrAdd(name: "Content-Type", value: contentType)
        self.init(status: status, headers: headers, body: Array(body.utf8))
    }

    /// A JSON response; `json` must already be JSON text.
    public static func json(status: Int = 200, _ json: String, headers: HTTPHeaders = [:]) -> HTTPResponse {
        HTTPResponse(status: status, contentType: "application/json", body: json, headers: headers)
    }

    /// The RFC 9110 reason phrase for the statuses this server and its users send.
    public static func standardReason(for status: Int) -> String {
        switch status {
        case 100: "Continue"
        case 200: "OK"
        case 201: "Created"
        case 202: "Accepted"
        case 204: "No Content"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 304: "Not Modified"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 409: "Conflict"
        case 413: "Content Too Large"
        case 415: "Unsupported Media Type"
        case 422: "Unprocessable Content"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        default:
            switch status / 100 {
            case 1: "Informational"
            case 2: "Success"
            case 3: "Redirection"
            case 4: "Client Error"
            default: "Server Error"
            }
        }
    }
}
