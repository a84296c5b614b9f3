import StoreRelayCore

/// Why a body could not become a `NormalizedEvent`.
///
/// A struct with an extensible code rather than an enum, so new failure kinds do not break
/// callers that switch on it; compare on `code`, read `reason` for the log line.
public struct EventError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure. New codes may appear; compare with `==`.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String, Sendable, Hashable {
            case malformedJSON, notAnObject, missingField, unknownEnvironment
        }

        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The bytes are not JSON at all.
        public static let malformedJSON = Code(.malformedJSON)
        /// The JSON is not an object, or a member that must be an object is not.
        public static let notAnObject = Code(.notAnObject)
        /// A member every notification (or stored event) carries is absent or of the wrong type.
        public static let missingField = Code(.missingField)
        /// The environment is missing or not one Apple documents.
        public static let unknownEnvironment = Code(.unknownEnvironment)

        public var description: String { base.rawValue }
    }

    public let code: Code
    /// One sentence for operators, naming the field at fault.
    public let reason: String

    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String { "\(code): \(reason)" }

    static func malformed(_ error: JSONError) -> EventError {
        EventError(.malformedJSON, "the body is not JSON (\(error))")
    }

    static func missing(_ field: String, _ expected: String) -> EventError {
        EventError(.missingField, "`\(field)` is missing or not \(expected)")
    }
}
