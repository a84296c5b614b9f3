/// Why an App Store Server API call did not give an answer, typed so the reconciler can tell
/// what to wait out, what to retry and what needs an operator.
public struct AppStoreAPIError: Error, Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        /// 401: the key, key id, issuer id or bundle id is wrong, or the key was revoked.
        case unauthorized
        /// 429: Apple's rate limit; `retryAt` says when to ask again.
        case rateLimited
        /// Apple answered with an error (`errorCode` when its body had one).
        case api
        /// No answer: DNS, connect, TLS, timeout, or the connection broke.
        case transport
        /// A 2xx whose body is not what Apple documents.
        case malformedResponse
        /// The api-key file or its contents cannot be used.
        case configuration
        /// The caller stopped waiting (the gateway is shutting down).
        case cancelled
    }

    public let kind: Kind
    public let message: String
    /// The HTTP status, when there was an answer.
    public var status: Int?
    /// Apple's `errorCode` (e.g. 4000017, PaginationTokenExpiredError).
    public var errorCode: Int64?
    /// For `.rateLimited`: Apple's `Retry-After`, a UNIX time in milliseconds.
    public var retryAt: Int64?

    public init(_ kind: Kind, _ message: String, status: Int? = nil, errorCode: Int64? = nil, retryAt: Int64? = nil) {
        self.kind = kind
        self.message = message
        self.status = status
        self.errorCode = errorCode
        self.retryAt = retryAt
    }

    public var description: String { message }

    /// Apple's error codes this client acts on (its documentation lists them all).
    public enum Code {
        public static let paginationTokenExpired: Int64 = 4000017
        public static let invalidPaginationToken: Int64 = 4000014
        public static let startDateTooFarInPast: Int64 = 4000012
        public static let serverNotificationURLNotFound: Int64 = 4040007
        public static let testNotificationNotFound: Int64 = 4040008
        /// The codes Apple's documentation says to retry ("Errors to retry"), and its rate
        /// limit code, which a 429 carries.
        public static let retryable: Set<Int64> = [4040002, 4040004, 4040006, 5000001, 4290000]
    }

    /// Whether asking again later may succeed: network failures, every 5xx, and the codes
    /// Apple marks retryable. Rate limits are waited out separately, until `retryAt`.
    public var isRetryable: Bool {
        switch kind {
        case .transport: return true
        case .api:
            if let errorCode, Code.retryable.contains(errorCode) { return true }
            return (status ?? 0) >= 500
        default: return false
        }
    }

    public var isPaginationTokenExpired: Bool { errorCode == Code.paginationTokenExpired }
}
