import StoreRelayNet

/// The options of the message-bus kinds' blocks: `destination NAME amqp URL { ... }`.
extension ConfigParser {
    static let amqpOptions = ["exchange", "routing-key", "ca-file", "heartbeat"] + DeliveryOptions.names

    /// The options a kind cannot do without, checked when its block closes.
    static let requiredAMQPOptions = ["exchange"]

    mutating func amqpOption(_ head: ConfigToken, _ arguments: [ConfigToken], _ options: inout AMQPOptions) {
        switch head.text {
        case "exchange":
            guard arity(head, arguments, 1...1, "exchange NAME (\"\" for the default exchange)") else { return }
            if let name = value(arguments[0], "exchange", Self.amqpShortString) { options.exchange = name }
        case "routing-key":
            guard arity(head, arguments, 1...1, "routing-key KEY, e.g. routing-key {environment}.{type}") else { return }
            if let template = value(arguments[0], "routing-key", { text throws(ConfigValueError) in
                let template = try NameTemplate(parsing: text)
                _ = try Self.amqpShortString(text)
                return template
            }) {
                options.routingKey = template
            }
        case "ca-file":
            guard arity(head, arguments, 1...1, "ca-file PEM-FILE") else { return }
            if let file = pathValue(arguments[0], "ca-file") { options.caFile = file }
        case "heartbeat":
            guard arity(head, arguments, 1...1, "heartbeat DURATION (0 for none)") else { return }
            if let interval = value(arguments[0], "heartbeat", { text throws(ConfigValueError) in
                if text == "0" { return Duration.zero }
                let interval = try ConfigValue.duration(text)
                guard interval >= .seconds(1), interval <= .seconds(65535) else {
                    throw ConfigValueError("'\(text)' is not between 1s and 65535s (AMQP counts heartbeats in whole seconds)")
                }
                return interval
            }) {
                options.heartbeat = interval
            }
        default:
            deliveryOption(head, arguments, &options.delivery)
        }
    }

    /// AMQP names travel as short strings: at most 255 bytes, no control characters.
    static func amqpShortString(_ text: String) throws(ConfigValueError) -> String {
        guard text.utf8.count <= 255 else { throw ConfigValueError("it is \(text.utf8.count) bytes long (expected at most 255)") }
        guard !text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw ConfigValueError("it holds a control character (expected printable text)")
        }
        return text
    }

    /// Parses a destination URL of a bus kind, with the parser's sentence as the config error.
    static func amqpURL(_ text: String) throws(ConfigValueError) -> AMQPURL {
        do {
            return try AMQPURL.parse(text)
        } catch {
            throw ConfigValueError(error.description)
        }
    }

    /// Stands in for an invalid AMQP URL so the block's options can still be checked.
    static let placeholderAMQPURL = AMQPURL(
        usesTLS: false, host: "invalid", hostKind: .hostname, port: 5672, user: "guest", password: "guest", virtualHost: "/")

    /// Reports each required option `block` lacks, at its opening line.
    mutating func reportMissing(_ required: [String], in block: Block, syntax: String) {
        for option in required where block.seenOptions[option] == nil {
            report(.missingArgument, at: block.opener, "\(block.label) needs '\(option)' (expected \(syntax))")
        }
    }
}
