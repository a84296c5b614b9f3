import StoreRelayNet
import StoreRelayCore

/// What SQS answered a SendMessage, read from the JSON protocol's response: success with the
/// message id, or an error type and message
/// (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-json-faqs.html).
/// Whatever the body holds, reading it never fails: an unreadable error body is still an
/// error with its HTTP status.
public struct SQSAnswer: Sendable, Hashable {
    public enum Verdict: Sendable, Hashable {
        case delivered
        /// Throttling, a 5xx or 429: the same message may be taken later.
        case retry
        /// Any other error: the queue does not exist, access is denied, a parameter is invalid.
        case refused
    }

    public let status: Int
    /// The message id SQS assigned (on success).
    public let messageId: String?
    /// The error's short type (`QueueDoesNotExist`, `ThrottlingException`), without the
    /// `com.amazonaws.sqs#` namespace.
    public let errorType: String?
    public let errorMessage: String?

    /// Error types that mean "slow down", whatever their status.
    static let throttling: Set<String> = [
        "ThrottlingException", "Throttling", "RequestThrottled", "TooManyRequestsException", "RequestLimitExceeded",
        "KmsThrottled", "KMS.ThrottlingException", "ServiceUnavailable", "InternalFailure", "InternalError",
    ]

    public init(status: Int, headers: HTTPHeaders, body: [UInt8]) {
        self.status = status
        let json = try? JSONValue.parse(Array(body.prefix(64 * 1024)))
        if (200..<300).contains(status) {
            messageId = json?["MessageId"]?.stringValue
            errorType = nil
            errorMessage = nil
            return
        }
        messageId = nil
        // `__type` in the body; the query-compatible header names the same error the older way.
        let type = json?["__type"]?.stringValue ?? headers["x-amzn-query-error"]?.split(separator: ";").first.map(String.init)
        errorType = type.map { String($0.split(separator: "#").last ?? Substring($0)) }
        errorMessage = (json?["message"]?.stringValue ?? json?["Message"]?.stringValue).map { String($0.prefix(300)) }
    }

    public var verdict: Verdict {
        if (200..<300).contains(status) { return .delivered }
        if status == 429 || (500..<600).contains(status) { return .retry }
        // The query-compatible spelling namespaces with dots (`AWS.SimpleQueueService.RequestThrottled`).
        if let errorType, Self.throttling.contains(errorType) || Self.throttling.contains(String(errorType.split(separator: ".").last ?? "")) {
            return .retry
        }
        return .refused
    }

    /// `HTTP 400 QueueDoesNotExist: The specified queue does not exist.`, for a dead letter.
    public var summary: String {
        var text = "HTTP \(status)"
        if let errorType { text += " \(errorType)" }
        if let errorMessage { text += ": " + errorMessage }
        return text
    }
}
