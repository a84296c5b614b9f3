/// Why a call for Google's OAuth2 token endpoint or the Play Developer API gave no answer,
/// typed so enrichment can tell what to retry and what needs an operator.
public struct PlayAPIError: Error, Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        /// No answer: DNS, connect, TLS, timeout, or the connection broke.
        case transport
        /// 429: Google's quota; `retryAfter` says when to ask again, when it did.
        case rateLimited
        /// 5xx (and 408): Google's side failed; asking again later may succeed.
        case server
        /// 401 from the API even with a fresh token, or the token endpoint refused the
        /// service account (`invalid_grant`, `invalid_client`, `unauthorized_client`).
        case unauthorized
        /// Any other 4xx: a purchase token Google does not know (404, 410), a package the
        /// service account may not see (403), a bad request (400). Asking again will not help.
        case rejected
        /// A 2xx whose body is not what Google documents, or larger than the cap.
        case malformedResponse
        /// The service-account file or its contents cannot be used.
        case configuration
        /// The caller stopped waiting (the gateway is shutting down).
        case cancelled
    }

    public let kind: Kind
    public let message: String
    /// The HTTP status, when there was an answer.
    public var status: Int?
    /// Google's error: the token endpoint's `error` (e.g. `invalid_grant`), or the API's
    /// `error.status` (e.g. `NOT_FOUND`, `PERMISSION_DENIED`).
    public var googleError: String?
    /// For `.rateLimited`: the `Retry-After` header in seconds, when there was one.
    public var retryAfter: Duration?

    public init(_ kind: Kind, _ message: String, status: Int? = nil, googleError: String? = nil, retryAfter: Duration? = nil) {
        self.kind = kind
        self.message = message
        self.status = status
        self.googleError = googleError
        self.retryAfter = retryAfter
    }

    public var description: String { message }

    /// Whether asking again later may succeed: no answer, quota, or a failure on Google's side.
    public var isRetryable: Bool {
        switch kind {
        case .transport, .rateLimited, .server: return true
        default: return false
        }
    }

    /// A short label for metrics and logs: `transport`, `rate_limited`, `server_error`,
    /// `unauthorized`, `rejected`, `malformed`, `configuration`, `cancelled`.
    public var reason: String {
        switch kind {
        case .transport: return "transport"
        case .rateLimited: return "rate_limited"
        case .server: return "server_error"
        case .unauthorized: return "unauthorized"
        case .rejected: return "rejected"
        case .malformedResponse: return "malformed"
        case .configuration: return "configuration"
        case .cancelled: return "cancelled"
        }
    }
}
