import StoreRelayCore

/// The machine-readable error codes of StoreRelay's HTTP surfaces, each tied to its status.
///
/// Open-ended on purpose (a struct, not an enum): the gateway adds its own, such as
/// 401 `signature`, with `init(status:code:message:)`.
public struct HTTPErrorCode: Sendable, Hashable {
    public let status: Int
    /// The `error` member of the JSON body.
    public let code: String
    /// The sentence used when the caller gives none.
    public let defaultMessage: String

    public init(status: Int, code: String, message: String) {
        self.status = status
        self.code = code
        self.defaultMessage = message
    }

    public static let malformed = HTTPErrorCode(status: 400, code: "malformed", message: "The request is malformed.")
    public static let notFound = HTTPErrorCode(status: 404, code: "not_found", message: "No resource at this path.")
    public static let methodNotAllowed = HTTPErrorCode(
        status: 405, code: "method_not_allowed", message: "This method is not allowed on this path.")
    public static let timeout = HTTPErrorCode(
        status: 408, code: "timeout", message: "The request was not received in time.")
    public static let tooLarge = HTTPErrorCode(
        status: 413, code: "too_large", message: "The request body is larger than allowed.")
    public static let headersTooLarge = HTTPErrorCode(
        status: 431, code: "headers_too_large", message: "The request header section is larger than allowed.")
    public static let unavailable = HTTPErrorCode(
        status: 503, code: "unavailable", message: "The service is unavailable; retry later.")
    /// Sent when a handler drops its responder without answering: a bug of ours, never a 4xx.
    public static let internalError = HTTPErrorCode(
        status: 500, code: "internal", message: "The server failed to answer the request.")
}

extension HTTPResponse {
    /// `{"error":"<code>","message":"<sentence>"}` with `Content-Type: application/json`.
    public static func error(_ code: HTTPErrorCode, message: String? = nil, headers: HTTPHeaders = [:]) -> HTTPResponse {
        let body = "{\"error\":" + JSONStringEscaping.quoted(code.code)
            + ",\"message\":" + JSONStringEscaping.quoted(message ?? code.defaultMessage) + "}"
        return .json(status: code.status, body, headers: headers)
    }
}
