/// Why `storerelay simulate` could not build, sign or deliver a notification.
///
/// Compare on `code`; `message` is one sentence for an operator. `code` is a struct over a
/// private enum so new codes can be added without breaking callers.
public struct SimulatorError: Error, Sendable, Hashable, CustomStringConvertible {
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Value: String, Sendable {
            case unknownType, unknownSubtype, invalidOption, certificateAuthority, signing, delivery
        }
        private let value: Value
        private init(_ value: Value) { self.value = value }

        /// The notification type is not in `NotificationCatalog` (a usage error).
        public static let unknownType = Code(.unknownType)
        /// The subtype (or its absence) is not documented for that type (a usage error).
        public static let unknownSubtype = Code(.unknownSubtype)
        /// Another option has an invalid value: environment, bundle id, apple id, URL.
        public static let invalidOption = Code(.invalidOption)
        /// The dev CA under `DATA/dev-ca/` cannot be created, read or trusted to be whole.
        public static let certificateAuthority = Code(.certificateAuthority)
        /// OpenSSL refused to build a certificate or sign.
        public static let signing = Code(.signing)
        /// The notification could not be posted, or the gateway's answer not read.
        public static let delivery = Code(.delivery)

        public var description: String { value.rawValue }
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// Whether this is a mistake in how the command was invoked (exit status 2).
    public var isUsageError: Bool {
        code == .unknownType || code == .unknownSubtype || code == .invalidOption
    }

    public var description: String { message }
}
