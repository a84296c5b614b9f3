import StoreRelayVerification
import StoreRelayCore

/// What the gateway decided about a verified notification.
public enum Disposition: Sendable, Equatable {
    case accept
    /// Genuinely Apple's but not for this gateway: stored, answered 200, fanned out nowhere.
    case quarantine(reason: String)

    /// How the reason of a notification Apple signed but this build cannot read begins. Such
    /// an event lacks what could not be read, so it is never replayed: the body is posted
    /// again once StoreRelay understands it.
    public static let notUnderstoodPrefix = "not understood: "

    /// Whether this is the quarantine of a notification this build could not read.
    public var isNotUnderstood: Bool {
        if case .quarantine(let reason) = self { return reason.hasPrefix(Self.notUnderstoodPrefix) }
        return false
    }
}

/// The journal payload of one accepted or quarantined notification:
/// `{"format":1,"id":..,"receivedAt":..,"receivedAtMs":..,"disposition":"accepted"|"quarantined",
///   "quarantineReason":..,"destinations":[..],"event":{<normalized event>},"body":"<Apple's body>"}`.
///
/// It holds everything fan-out needs after a restart without verifying again: the routed
/// destinations (decided once, when Apple got its 200), the event for `format normalized`,
/// and Apple's body for `format apple` and `include-raw`.
public struct StoredNotification: Sendable {
    static let format: Int64 = 1
    /// What we wrote we must read back: records nest Apple's payloads (capped at 32 levels on
    /// the way in) a few levels deeper, so reading allows more than parsing Apple's input does.
    package static let storedDepth = 96

    public var event: NormalizedEvent
    public var disposition: Disposition
    /// The destinations the route table named at acceptance; empty means unrouted.
    public var destinations: [String]
    public var body: [UInt8]
    public var receivedAt: Timestamp

    public init(event: NormalizedEvent, disposition: Disposition, destinations: [String], body: [UInt8], receivedAt: Timestamp) {
        self.event = event
        self.disposition = disposition
        self.destinations = destinations
        self.body = body
        self.receivedAt = receivedAt
    }

    public var id: String { event.id }

    public func encoded() -> [UInt8] {
        var reason: JSONValue = .null
        var disposition = "accepted"
        if case .quarantine(let why) = self.disposition {
            disposition = "quarantined"
            reason = .string(why)
        }
        let header: JSONValue = [
            "format": .integer(Self.format),
            "id": .string(event.id),
            "receivedAt": .string(receivedAt.iso8601),
            "receivedAtMs": .integer(receivedAt.milliseconds),
            "disposition": .string(disposition),
            "quarantineReason": reason,
            "destinations": .array(destinations.map { .string($0) }),
        ]
        // The event is already serialized (it is what destinations receive): splice its bytes
        // in rather than serializing the same tree again on the acknowledgement path.
        let eventBytes = event.jsonBytes()
        var out: [UInt8] = []
        // One allocation: the header is small, and escaping adds a few bytes to the body.
        out.reserveCapacity(512 + eventBytes.count + body.count + body.count / 8)
        header.serialize(into: &out)
        out.removeLast()  // the closing brace
        out.append(contentsOf: #","event":"#.utf8)
        out.append(contentsOf: eventBytes)
        out.append(contentsOf: #","body":"#.utf8)
        // Apple's bodies are JSON, so valid UTF-8 (the parser rejected anything else): escaped
        // straight from the bytes, with no String of the body made for it.
        body.withUnsafeBufferPointer { JSONValue.serializeString(utf8: $0, into: &out) }
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// Reads a journal payload back; nil when it is not a notification record of this format.
    public init?(decoding bytes: [UInt8]) {
        guard let record = try? JSONValue.parse(bytes, maxDepth: Self.storedDepth),
              record["format"]?.int64Value == Self.format,
              let eventObject = record["event"]?.objectValue,
              let event = try? NormalizedEvent(storedObject: eventObject),
              let body = record["body"]?.stringValue,
              let receivedAt = record["receivedAtMs"]?.int64Value
        else { return nil }
        self.event = event
        self.body = Array(body.utf8)
        self.receivedAt = Timestamp(milliseconds: receivedAt)
        destinations = record["destinations"]?.arrayValue?.compactMap(\.stringValue) ?? []
        if record["disposition"]?.stringValue == "quarantined" {
            disposition = .quarantine(reason: record["quarantineReason"]?.stringValue ?? "quarantined")
        } else {
            disposition = .accept
        }
    }
}
