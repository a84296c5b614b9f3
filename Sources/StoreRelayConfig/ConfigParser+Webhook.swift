/// The options of a `destination NAME webhook URL { ... }` block.
extension ConfigParser {
    /// Headers StoreRelay writes itself, or that belong to the connection: a configured
    /// value would conflict with them or break framing.
    static let reservedHeaders: Set<String> = [
        "content-type", "content-length", "host", "user-agent", "transfer-encoding", "connection",
        "keep-alive", "expect", "te", "trailer", "upgrade",
    ]

    mutating func webhookOption(_ head: ConfigToken, _ arguments: [ConfigToken], _ options: inout WebhookOptions) {
        switch head.text {
        case "signing-secret":
            guard arity(head, arguments, 1...WebhookOptions.maxSigningSecrets, "signing-secret whsec_NEW [whsec_OLD]") else { return }
            var secrets: [ConfigSecret] = []
            for argument in arguments {
                guard let secret = value(argument, "signing-secret", Self.signingSecret) else { return }
                // The same secret twice would sign twice and rotate nothing: a copy-paste slip.
                guard !secrets.contains(secret) else {
                    report(.invalidValue, at: argument, "invalid signing-secret: the same secret is given twice (expected the new secret, then the old one)")
                    return
                }
                secrets.append(secret)
            }
            options.signingSecrets = secrets
        case "header":
            guard arity(head, arguments, 2...2, "header NAME VALUE") else { return }
            if let name = value(arguments[0], "header name", Self.headerName) {
                options.headers.append(WebhookOptions.Header(name: name, value: arguments[1].text))
            }
        case "ca-file":
            guard arity(head, arguments, 1...1, "ca-file PEM-FILE") else { return }
            if let file = pathValue(arguments[0], "ca-file") { options.caFile = file }
        default:
            deliveryOption(head, arguments, &options.delivery, chat: true)
        }
    }

    /// A `whsec_<base64>` secret, its key non-empty.
    static func signingSecret(_ text: String) throws(ConfigValueError) -> ConfigSecret {
        guard text.hasPrefix("whsec_") else { throw ConfigValueError("the secret does not start with 'whsec_' (expected whsec_ followed by base64)") }
        guard WebhookOptions.decodeSigningSecret(text) != nil else {
            throw ConfigValueError("the part after 'whsec_' is not valid non-empty base64 (expected whsec_ followed by base64)")
        }
        return ConfigSecret(text)
    }

    /// An HTTP field name (RFC 9110 §5.1 token) that StoreRelay does not set itself.
    static func headerName(_ text: String) throws(ConfigValueError) -> String {
        let tokenPunctuation: Set<Unicode.Scalar> = ["!", "#", "$", "%", "&", "'", "*", "+", "-", ".", "^", "_", "`", "|", "~"]
        guard !text.isEmpty, text.unicodeScalars.allSatisfy({
            ConfigLexer.isASCIILetter($0) || ("0"..."9").contains($0) || tokenPunctuation.contains($0)
        }) else {
            throw ConfigValueError("'\(text)' is not a valid header name (expected letters, digits and !#$%&'*+-.^_`|~)")
        }
        let lower = text.lowercased()
        if lower.hasPrefix("webhook-") || lower.hasPrefix("storerelay-") || reservedHeaders.contains(lower) {
            throw ConfigValueError("'\(text)' is set by StoreRelay itself (expected another header name)")
        }
        return text
    }
}

/// The options of `DeliveryOptions`, the same in every kind's block.
extension ConfigParser {
    /// - Parameter chat: whether `format slack` is allowed: only a webhook posts to a chat.
    mutating func deliveryOption(_ head: ConfigToken, _ arguments: [ConfigToken], _ options: inout DeliveryOptions,
                                 chat: Bool = false) {
        switch head.text {
        case "format":
            let choices = chat ? "normalized, apple or slack" : "normalized or apple"
            guard arity(head, arguments, 1...1, chat ? "format normalized|apple|slack" : "format normalized|apple") else { return }
            if let format = value(arguments[0], "format", { text throws(ConfigValueError) in
                guard let format = DeliveryOptions.Format(rawValue: text), chat || format != .slack else {
                    let hint = text == "slack" ? " (slack is for webhook destinations: chat webhooks are HTTP)" : ""
                    throw ConfigValueError("'\(text)' is not \(choices)\(hint)")
                }
                return format
            }) {
                options.format = format
            }
        case "include-raw":
            guard arity(head, arguments, 1...1, "include-raw yes|no") else { return }
            if let include = value(arguments[0], "include-raw", ConfigValue.boolean) { options.includeRaw = include }
        case "timeout":
            guard arity(head, arguments, 1...1, "timeout DURATION") else { return }
            if let timeout = value(arguments[0], "timeout", Self.positiveDuration) { options.timeout = timeout }
        case "concurrency":
            guard arity(head, arguments, 1...1, "concurrency NUMBER") else { return }
            if let count = value(arguments[0], "concurrency", { text throws(ConfigValueError) in try ConfigValue.integer(text, in: 1...1024) }) {
                options.concurrency = count
            }
        case "max-attempts":
            guard arity(head, arguments, 1...1, "max-attempts NUMBER") else { return }
            if let count = value(arguments[0], "max-attempts", { text throws(ConfigValueError) in try ConfigValue.integer(text, in: 1...1_000_000) }) {
                options.maxAttempts = count
            }
        case "backoff":
            guard arity(head, arguments, 2...2, "backoff FROM TO, e.g. backoff 1s 1h") else { return }
            let from = value(arguments[0], "backoff start", Self.positiveDuration)
            let to = value(arguments[1], "backoff limit", Self.positiveDuration)
            guard let from, let to else { return }
            guard from <= to else {
                report(.invalidValue, at: arguments[1], "invalid backoff: the limit \(arguments[1].text) is below the start \(arguments[0].text) (expected FROM <= TO)")
                return
            }
            options.backoffInitial = from
            options.backoffMaximum = to
        case "order":
            guard arity(head, arguments, 1...1, "order per-subscription|none") else { return }
            if let order = value(arguments[0], "order", { text throws(ConfigValueError) in
                guard let order = DeliveryOptions.Order(rawValue: text) else { throw ConfigValueError("'\(text)' is not per-subscription or none") }
                return order
            }) {
                options.order = order
            }
        case "rate":
            guard arity(head, arguments, 1...1, "rate N/s or rate N/m") else { return }
            if let rate = value(arguments[0], "rate", DeliveryRate.parse) { options.rate = rate }
        default:  // max-age
            guard arity(head, arguments, 1...1, "max-age DURATION") else { return }
            if let age = value(arguments[0], "max-age", Self.positiveDuration) { options.maxAge = age }
        }
    }
}
