import FuzzSupport
import StoreRelayCore

/// The JSON invariant: what parses re-serializes to text that parses back to an equal value,
/// and serializing that value again gives the same bytes (StoreRelay passes Apple's payloads
/// through, so a round trip must never change them).
enum JSONRoundTrip {
    /// The parsed value, after checking the round trip; nil when `bytes` is not JSON.
    static func check(_ bytes: [UInt8]) -> JSONValue? {
        let value: JSONValue
        do {
            value = try JSONValue.parse(bytes)
        } catch {
            fuzzCheck(error.offset >= 0 && error.offset <= bytes.count,
                      "JSON error offset \(error.offset) outside an input of \(bytes.count) bytes")
            return nil
        }
        let text = value.serializedBytes()
        let again: JSONValue
        do {
            again = try JSONValue.parse(text)
        } catch {
            fuzzCheck(false, "serialized JSON does not parse (\(error)): \(String(decoding: text, as: UTF8.self))")
            return nil
        }
        fuzzCheck(again == value, "JSON round trip changed the value: \(String(decoding: text, as: UTF8.self))")
        fuzzCheck(again.hashValue == value.hashValue, "equal JSON values hash differently")
        fuzzCheck(again.serializedBytes() == text, "serializing a re-parsed value changed its text")
        return value
    }
}
