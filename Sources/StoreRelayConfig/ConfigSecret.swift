/// A secret from the configuration (token, shared secret, signing secret).
///
/// Its description and mirror are redacted, so that logging or dumping a configuration can
/// never print the value; code that needs it reads ``value`` explicitly.
public struct ConfigSecret: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The secret itself.
    public let value: String

    public init(_ value: String) { self.value = value }

    /// `<set>`, never the value.
    public var description: String { "<set>" }
    public var debugDescription: String { "<set>" }
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}
