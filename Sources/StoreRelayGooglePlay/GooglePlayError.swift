/// Why something from or for Google Play was refused: one sentence for the log, the answer
/// and the operator.
public struct GooglePlayError: Error, Sendable, Hashable, CustomStringConvertible {
    public let reason: String
    public init(_ reason: String) { self.reason = reason }
    public var description: String { reason }
}
