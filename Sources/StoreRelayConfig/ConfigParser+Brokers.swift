import StoreRelayNet

/// The options of the message-bus kinds' blocks: `destination NAME amqp URL { ... }` and
/// `destination NAME sqs QUEUE-URL { ... }`.
extension ConfigParser {
    static let amqpOptions = ["exchange", "routing-key", "ca-file", "heartbeat"] + DeliveryOptions.names
    static let sqsOptions = ["region", "access-key-id", "secret-access-key", "session-token", "endpoint", "ca-file"] + DeliveryOptions.names

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

    mutating func sqsOption(_ head: ConfigToken, _ arguments: [ConfigToken], _ options: inout SQSOptions) {
        switch head.text {
        case "region":
            guard arity(head, arguments, 1...1, "region NAME, e.g. region eu-west-1") else { return }
            if let region = value(arguments[0], "region", Self.awsRegion) { options.region = region }
        case "access-key-id":
            guard arity(head, arguments, 1...1, "access-key-id ID") else { return }
            if let id = value(arguments[0], "access-key-id", { text throws(ConfigValueError) in
                guard !text.isEmpty, text.utf8.count <= 128, text.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
                    throw ConfigValueError("'\(text.prefix(40))' is not an access key id (expected letters and digits, e.g. AKIAIOSFODNN7EXAMPLE)")
                }
                return text
            }) {
                options.accessKeyId = id
            }
        case "secret-access-key":
            guard arity(head, arguments, 1...1, "secret-access-key SECRET") else { return }
            if let secret = secretValue(arguments[0], "secret-access-key") { options.secretAccessKey = secret }
        case "session-token":
            guard arity(head, arguments, 1...1, "session-token TOKEN") else { return }
            options.sessionToken = secretValue(arguments[0], "session-token")
        case "endpoint":
            guard arity(head, arguments, 1...1, "endpoint URL, e.g. endpoint https://sqs.eu-west-1.amazonaws.com") else { return }
            if let url = value(arguments[0], "endpoint", { text throws(ConfigValueError) in
                let url = try Self.loopbackOrHTTPS(text, "endpoint")
                guard url.pathAndQuery == "/" else { throw ConfigValueError("'\(text)' has a path or query (expected scheme://host[:port] only)") }
                return url
            }) {
                options.endpoint = url
            }
        case "ca-file":
            guard arity(head, arguments, 1...1, "ca-file PEM-FILE") else { return }
            if let file = pathValue(arguments[0], "ca-file") { options.caFile = file }
        default:
            deliveryOption(head, arguments, &options.delivery)
        }
    }

    /// `https://sqs.REGION.amazonaws.com/ACCOUNT/QUEUE`: the account and the queue name, no query.
    static func sqsQueueURL(_ text: String) throws(ConfigValueError) -> HTTPURL {
        let url = try loopbackOrHTTPS(text, "queue URL")
        let segments = url.pathAndQuery.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        guard !url.pathAndQuery.contains("?"), segments.count == 2, segments.allSatisfy({ !$0.isEmpty }) else {
            throw ConfigValueError("'\(text)' does not end in /ACCOUNT/QUEUE (expected https://sqs.REGION.amazonaws.com/ACCOUNT/QUEUE)")
        }
        let name = segments.last!
        guard name.utf8.count <= 80, name.utf8.allSatisfy({ ConfigLexer.isASCIILetter(Unicode.Scalar($0)) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D || $0 == 0x5F || $0 == 0x2E }) else {
            throw ConfigValueError("'\(name)' is not a queue name (expected up to 80 letters, digits, '-' and '_', '.fifo' for a FIFO queue)")
        }
        return url
    }

    /// An https URL, or plain http for a loopback host only (tests, local emulators): SigV4
    /// does not hide the message, and a session token travels in a header.
    static func loopbackOrHTTPS(_ text: String, _ what: String) throws(ConfigValueError) -> HTTPURL {
        let url = try HTTPURL.parseWebhook(text)
        guard url.usesTLS || url.isLoopback else {
            throw ConfigValueError("plain http is allowed only for a loopback host (expected an https \(what))")
        }
        return url
    }

    /// `eu-west-1`: lower-case letters, digits and '-'.
    static func awsRegion(_ text: String) throws(ConfigValueError) -> String {
        guard !text.isEmpty, text.utf8.count <= 32, text.utf8.allSatisfy({ ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D }) else {
            throw ConfigValueError("'\(text.prefix(40))' is not a region (expected e.g. eu-west-1)")
        }
        return text
    }

    /// Fills in what the block left to the environment (credentials, region) and reports what
    /// is still missing, at the block's opening line.
    mutating func completeSQS(_ options: inout SQSOptions, in block: Block) {
        let inBlock = (block.seenOptions["access-key-id"] != nil, block.seenOptions["secret-access-key"] != nil)
        switch inBlock {
        case (true, true): break
        case (true, false), (false, true):
            let missing = inBlock.0 ? "secret-access-key" : "access-key-id"
            report(.missingArgument, at: block.opener, "\(block.label) needs '\(missing)' too (expected access-key-id and secret-access-key together)")
        case (false, false):
            if let id = environment["AWS_ACCESS_KEY_ID"], !id.isEmpty, let secret = environment["AWS_SECRET_ACCESS_KEY"], !secret.isEmpty {
                options.accessKeyId = id
                options.secretAccessKey = ConfigSecret(secret)
                if options.sessionToken == nil, let token = environment["AWS_SESSION_TOKEN"], !token.isEmpty { options.sessionToken = ConfigSecret(token) }
                options.credentialsFromEnvironment = true
            } else {
                report(.missingArgument, at: block.opener, "\(block.label) has no credentials (expected access-key-id and secret-access-key "
                    + "in the block, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in the environment)")
            }
        }
        guard options.region.isEmpty else { return }
        let host = (options.endpoint ?? options.queueURL).host.split(separator: ".")
        if let region = environment["AWS_REGION"] ?? environment["AWS_DEFAULT_REGION"], (try? Self.awsRegion(region)) != nil {
            options.region = region
        } else if host.count == 4, host[0] == "sqs", host[2] == "amazonaws", host[3] == "com" {
            options.region = String(host[1])
        } else {
            report(.missingArgument, at: block.opener, "\(block.label) has no region (expected region NAME in the block, AWS_REGION in the "
                + "environment, or a queue URL of the form https://sqs.REGION.amazonaws.com/...)")
        }
    }

    /// Stands in for an invalid queue URL so the block's options can still be checked.
    static let placeholderSQSURL = HTTPURL(
        scheme: .https, host: "invalid", hostKind: .hostname, port: 443, pathAndQuery: "/0/invalid", absoluteString: "https://invalid/0/invalid")
}
