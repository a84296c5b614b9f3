/// A value in a log line's metadata, written as its JSON type: a count or a duration as a
/// number, a flag as `true`/`false`, the rest as a string. Log pipelines (Loki, Elasticsearch,
/// CloudWatch) compare and sum numbers only when they arrive as numbers.
public protocol LogValue: Sendable {
    /// Appends the value as JSON.
    func appendJSON(to line: inout String)
}

extension String: LogValue {
    public func appendJSON(to line: inout String) { line += JSONStringEscaping.quoted(self) }
}

extension Substring: LogValue {
    public func appendJSON(to line: inout String) { line += JSONStringEscaping.quoted(String(self)) }
}

extension Bool: LogValue {
    public func appendJSON(to line: inout String) { line += self ? "true" : "false" }
}

extension Int: LogValue {
    public func appendJSON(to line: inout String) { line += String(self) }
}

extension Int64: LogValue {
    public func appendJSON(to line: inout String) { line += String(self) }
}

extension Int32: LogValue {
    public func appendJSON(to line: inout String) { line += String(self) }
}

extension UInt64: LogValue {
    public func appendJSON(to line: inout String) { line += String(self) }
}

extension Double: LogValue {
    /// JSON has no NaN or infinity: those are written as strings, so the line still parses.
    public func appendJSON(to line: inout String) {
        line += isFinite ? String(self) : JSONStringEscaping.quoted(String(self))
    }
}

extension UInt: LogValue {
    public func appendJSON(to line: inout String) { line += String(self) }
}

extension UInt32: LogValue {
    public func appendJSON(to line: inout String) { line += String(self) }
}

extension UInt16: LogValue {
    public func appendJSON(to line: inout String) { line += String(self) }
}
