import Foundation
import StoreRelayVerification
import StoreRelayCore
import Testing

/// ISO-8601 with milliseconds, computed with Foundation rather than `Timestamp`, so the
/// expected strings do not come from the code under test.
func isoUTC(milliseconds ms: Int64) -> String {
    let seconds = ms >= 0 ? ms / 1000 : (ms - 999) / 1000
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: "UTC")
    formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss"
    let whole = formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
    return whole + String(format: ".%03dZ", Int(ms - seconds * 1000))
}

extension NormalizedEvent {
    /// The event as downstreams see it, parsed back from its bytes.
    func parsed() throws -> JSONValue {
        try JSONValue.parse(jsonBytes())
    }
}

extension JSONValue {
    /// A string's text, a number's text, or the serialized value, for readable comparisons.
    var text: String {
        switch self {
        case .string(let s): return s
        case .number(let n): return n.text
        default: return serialized()
        }
    }
}

/// A V2 payload built in a test, wrapped as the verifier would hand it over.
func content(_ payload: JSONValue, transaction: JSONValue? = nil, renewal: JSONValue? = nil,
             appTransaction: JSONValue? = nil) throws -> NotificationContent {
    let object = try #require(payload.objectValue)
    return try #require(NotificationContent(payload: object, transaction: transaction, renewal: renewal,
                                            appTransaction: appTransaction))
}

