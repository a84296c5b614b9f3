import StoreRelayNet

/// The options of `destination NAME redis-stream URL { ... }` and `destination NAME nats URL
/// { ... }` (SPEC "Destinations beyond webhooks"): each kind's own, then the common
/// `DeliveryOptions`.
extension ConfigParser {
    static let redisStreamOptions = ["stream", "max-length", "ca-file"] + DeliveryOptions.names
    static let natsOptions = ["subject", "user", "password", "token", "ca-file"] + DeliveryOptions.names

    mutating func redisStreamOption(_ head: ConfigToken, _ arguments: [ConfigToken], _ options: inout RedisStreamOptions) {
        switch head.text {
        case "stream":
            guard arity(head, arguments, 1...1, "stream NAME, e.g. stream appstore:{environment}") else { return }
            if let stream = value(arguments[0], "stream name", { text throws(ConfigValueError) in try NameTemplate(parsing: text) }) {
                options.stream = stream
            }
        case "max-length":
            guard arity(head, arguments, 1...1, "max-length NUMBER") else { return }
            if let length = value(arguments[0], "max-length", { text throws(ConfigValueError) in try ConfigValue.integer(text, in: 1...Int(Int64.max)) }) {
                options.maxLength = length
            }
        case "ca-file":
            guard arity(head, arguments, 1...1, "ca-file PEM-FILE") else { return }
            if let file = pathValue(arguments[0], "ca-file") { options.caFile = file }
        default:
            deliveryOption(head, arguments, &options.delivery)
        }
    }

    mutating func natsOption(_ head: ConfigToken, _ arguments: [ConfigToken], _ options: inout NATSOptions) {
        switch head.text {
        case "subject":
            guard arity(head, arguments, 1...1, "subject SUBJECT, e.g. subject appstore.{environment}.{type}") else { return }
            if let subject = value(arguments[0], "subject", NATSOptions.Subject.parse) { options.subject = subject }
        case "user":
            guard arity(head, arguments, 1...1, "user NAME") else { return }
            if let user = value(arguments[0], "user", { text throws(ConfigValueError) in
                guard !text.isEmpty else { throw ConfigValueError("empty user name (is its variable empty?)") }
                return text
            }) {
                options.user = user
            }
        case "password":
            guard arity(head, arguments, 1...1, "password SECRET") else { return }
            options.password = secretValue(arguments[0], "password")
        case "token":
            guard arity(head, arguments, 1...1, "token SECRET") else { return }
            options.token = secretValue(arguments[0], "token")
        case "ca-file":
            guard arity(head, arguments, 1...1, "ca-file PEM-FILE") else { return }
            if let file = pathValue(arguments[0], "ca-file") { options.caFile = file }
        default:
            deliveryOption(head, arguments, &options.delivery)
        }
    }

    /// NATS authenticates with user and password, or a token: one pair or the other, whole.
    /// Said at the block's `{` when it closes, since the options may come in any order.
    mutating func checkCredentials(_ options: NATSOptions, _ block: Block) -> Bool {
        let label = block.label
        if (options.user == nil) != (options.password == nil) {
            let given = options.user == nil ? "password" : "user"
            let missing = options.user == nil ? "user" : "password"
            report(.invalidValue, at: block.opener,
                   "\(label) has \(given) (line \(block.seenOptions[given] ?? block.opener.line)) without \(missing) (expected both, or token alone)")
            return false
        }
        if options.token != nil, options.user != nil {
            report(.invalidValue, at: block.opener,
                   "\(label) has both token and user/password (expected one way to authenticate)")
            return false
        }
        return true
    }
}
