/// A JSON number kept as its original text, so passing a payload through never changes a digit.
public struct JSONNumber: Sendable, Hashable, CustomStringConvertible {
    /// The number exactly as written, already validated against RFC 8259's grammar.
    public let text: String

    public init(_ value: Int64) { text = String(value) }

    /// A number from a `Double`; non-finite values have no JSON form and become `0`.
    public init(_ value: Double) {
        if !value.isFinite {
            text = "0"
        } else if value == value.rounded(), abs(value) < 1e15 {
            text = String(Int64(value))
        } else {
            text = "\(value)"
        }
    }

    /// Accepts `text` only when it is a valid JSON number.
    public init?(text: String) {
        let utf8 = Array(text.utf8)
        let parsed = try? utf8.withUnsafeBufferPointer { buffer throws(JSONError) in
            try JSONParser.withParser(buffer) { parser throws(JSONError) in try parser.parseNumberOnly() }
        }
        guard parsed != nil else { return nil }
        self.text = text
    }

    init(validatedText: String) { text = validatedText }

    public var int64Value: Int64? {
        if let exact = Int64(text) { return exact }
        guard let double = Double(text), double == double.rounded(),
              double >= -9.2e18, double <= 9.2e18 else { return nil }
        return Int64(double)
    }

    public var doubleValue: Double { Double(text) ?? 0 }

    public var description: String { text }
}
