import StoreRelayDelivery
import StoreRelayCore

/// The App Store context an operator needs about one dead letter, read from its SPEC record
/// (`{id, eventId, destination, reason, createdAt, attempts, event}`). Built from the JSON so
/// the page (from `DeadLetter.json`) and the CLI (from the API's answer) show the same thing.
public struct DeadLetterSummary: Sendable, Equatable {
    public var id: String
    public var eventId: String
    public var destination: String?
    public var reason: String
    public var createdAt: Timestamp?
    public var type: String
    public var subtype: String?
    public var environment: String?
    public var bundleId: String?
    public var productId: String?
    public var originalTransactionId: String?
    public var attemptCount: Int
    public var lastError: String?

    /// What a listing's reason filter takes, by name (`DeadLetterReasonFilter`), for the CLI,
    /// which sees dead letters only through the API.
    public static let reasonFilters: [String] = DeadLetterReasonFilter.all.map(\.name)

    public init(record: JSONValue) {
        let event = record["event"] ?? .null
        let attempts = record["attempts"]?.arrayValue ?? []
        id = record["id"]?.stringValue ?? ""
        eventId = record["eventId"]?.stringValue ?? ""
        destination = record["destination"]?.stringValue
        reason = record["reason"]?.stringValue ?? ""
        createdAt = record["createdAt"]?.stringValue.flatMap(Timestamp.init(iso8601:))
        type = event["type"]?.stringValue ?? ""
        subtype = event["subtype"]?.stringValue
        environment = event["environment"]?.stringValue
        bundleId = event["app"]?["bundleId"]?.stringValue
        productId = event["subscription"]?["productId"]?.stringValue ?? event["transaction"]?["productId"]?.stringValue
        originalTransactionId = event["subscription"]?["originalTransactionId"]?.stringValue
            ?? event["transaction"]?["originalTransactionId"]?.stringValue
        attemptCount = attempts.count
        lastError = attempts.last?["error"]?.stringValue ?? record["detail"]?.stringValue
    }

    /// `TYPE/SUBTYPE`, or `TYPE` when there is no subtype.
    public var typeAndSubtype: String { subtype.map { "\(type)/\($0)" } ?? type }

    /// How long ago the letter was created, relative to `now`.
    public func age(now: Timestamp) -> String {
        createdAt.map { AgeFormatting.describe(milliseconds: now.milliseconds - $0.milliseconds) } ?? "?"
    }
}
