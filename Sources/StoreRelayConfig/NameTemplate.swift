/// A bus name with placeholders (SPEC "Destinations beyond webhooks"): a NATS subject, an AMQP
/// routing key or a Redis stream name such as `appstore.{environment}.{type}`, filled in per
/// event. Parsed once when the configuration loads, so a misspelt placeholder is a config
/// error rather than a literal `{enviroment}` on every message.
public struct NameTemplate: Sendable, Hashable, CustomStringConvertible {
    /// What a placeholder stands for.
    public enum Placeholder: String, Sendable, Hashable, CaseIterable {
        case environment, type, subtype, bundleId
    }

    public enum Part: Sendable, Hashable {
        case literal(String)
        case placeholder(Placeholder)
    }

    public let parts: [Part]
    /// As written in `routes.conf`.
    public let description: String

    /// Whether the name is the same for every event (no placeholder).
    public var isConstant: Bool { parts.allSatisfy { if case .literal = $0 { true } else { false } } }

    /// Parses `text`; `{` must open a known placeholder and be closed by `}`.
    init(parsing text: String) throws(ConfigValueError) {
        var parts: [Part] = []
        var literal = ""
        var rest = Substring(text)
        while let open = rest.firstIndex(of: "{") {
            literal += rest[..<open]
            guard let close = rest[open...].firstIndex(of: "}") else {
                throw ConfigValueError("'{' is not closed in '\(text)' (expected a placeholder such as {environment})")
            }
            let name = String(rest[rest.index(after: open)..<close])
            guard let placeholder = Placeholder(rawValue: name) else {
                let known = Placeholder.allCases.map { "{\($0.rawValue)}" }.joined(separator: ", ")
                throw ConfigValueError("unknown placeholder '{\(name)}' in '\(text)' (expected \(known))")
            }
            if !literal.isEmpty { parts.append(.literal(literal)) }
            literal = ""
            parts.append(.placeholder(placeholder))
            rest = rest[rest.index(after: close)...]
        }
        guard !rest.contains("}") else { throw ConfigValueError("'}' without '{' in '\(text)'") }
        literal += rest
        if !literal.isEmpty { parts.append(.literal(literal)) }
        guard !parts.isEmpty else { throw ConfigValueError("the name is empty") }
        self.parts = parts
        description = text
    }

    /// The name with each placeholder replaced by `value(placeholder)`.
    public func expand(_ value: (Placeholder) -> String) -> String {
        var name = ""
        for part in parts {
            switch part {
            case .literal(let text): name += text
            case .placeholder(let placeholder): name += value(placeholder)
            }
        }
        return name
    }
}
