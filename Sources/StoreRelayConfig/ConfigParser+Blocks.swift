import StoreRelayCore
import StoreRelayNet

/// `app`, `destination` and `cluster`: their header lines, the options of their blocks, and closing.
extension ConfigParser {
    static let appOptions = ["apple-id", "shared-secret", "api-key", "reconcile"]
    static let webhookOptions = ["signing-secret", "header", "ca-file"] + DeliveryOptions.names
    static let fileOptions = ["rotate", "compress"]

    mutating func beginApp(_ head: ConfigToken, _ arguments: [ConfigToken], opener: ConfigToken?) {
        var isValid = arity(head, arguments, 1...1, "app BUNDLE-ID { ... }")
        var bundleId = arguments.first?.text ?? ""
        if isValid {
            let token = arguments[0]
            if let first = appLines[token.text] {
                report(.duplicate, at: token, "duplicate app '\(token.text)' (already declared at line \(first); each app may be declared once)")
                isValid = false
            } else if let id = value(token, "bundle id", Self.bundleId) {
                bundleId = id
                appLines[id] = token.line
            } else {
                isValid = false
            }
        }
        let app = AppConfiguration(bundleId: bundleId)
        let block = Block(kind: .app(app), name: bundleId, label: "app '\(bundleId)'", opener: opener ?? head, isValid: isValid)
        if opener != nil { state = .block(block) } else { close(block) }
    }

    mutating func beginDestination(_ head: ConfigToken, _ arguments: [ConfigToken], opener: ConfigToken?) {
        let syntax = "destination NAME KIND TARGET: webhook URL, file DIRECTORY, redis-stream redis://HOST:PORT/DB, nats nats://HOST:PORT, amqp URL or sqs QUEUE-URL"
        if let name = arguments.first, destinationLines[name.text] == nil { destinationLines[name.text] = name.line }
        var isValid = arity(head, arguments, 3...3, syntax)
        let name = arguments.first?.text ?? ""
        var kind = Block.Kind.ignored
        if arguments.count == 3 {
            let (nameToken, kindToken, target) = (arguments[0], arguments[1], arguments[2])
            if let first = destinationLines[name], first != nameToken.line {
                report(.duplicate, at: nameToken, "duplicate destination '\(name)' (already declared at line \(first); names must be unique)")
                isValid = false
            } else if value(nameToken, "destination name", Self.destinationName) == nil {
                isValid = false
            }
            switch kindToken.text {
            case "webhook":
                let url = value(target, "webhook URL", WebhookURL.parseWebhook)
                isValid = isValid && url != nil
                kind = .webhook(WebhookOptions(url: url ?? Self.placeholderURL))
            case "file":
                let directory = pathValue(target, "file queue directory")
                isValid = isValid && directory != nil
                kind = .file(FileQueueOptions(directory: directory ?? ""))
            case "redis-stream":
                let url = value(target, "redis-stream URL") { text throws(ConfigValueError) in
                    do throws(AddressError) { return try RedisURL.parse(text) } catch { throw ConfigValueError(error.description) }
                }
                isValid = isValid && url != nil
                kind = .redisStream(RedisStreamOptions(url: url ?? Self.placeholderRedisURL))
            case "nats":
                let url = value(target, "nats URL") { text throws(ConfigValueError) in
                    do throws(AddressError) { return try NATSURL.parse(text) } catch { throw ConfigValueError(error.description) }
                }
                isValid = isValid && url != nil
                kind = .nats(NATSOptions(url: url ?? NATSURL(requiresTLS: false, host: "invalid", hostKind: .hostname, port: NATSURL.defaultPort)))
            case "amqp":
                let url = value(target, "AMQP URL", Self.amqpURL)
                isValid = isValid && url != nil
                kind = .amqp(AMQPOptions(url: url ?? Self.placeholderAMQPURL))
            case "sqs":
                let url = value(target, "SQS queue URL", Self.sqsQueueURL)
                isValid = isValid && url != nil
                kind = .sqs(SQSOptions(queueURL: url ?? Self.placeholderSQSURL))
            default:
                report(.invalidValue, at: kindToken, "unknown destination kind '\(kindToken.text)' (expected webhook, file, redis-stream, nats, amqp or sqs)")
                isValid = false
            }
        }
        let block = Block(kind: kind, name: name, label: "destination '\(name)'", opener: opener ?? head, isValid: isValid)
        if opener != nil { state = .block(block) } else { close(block) }
    }

    /// Ends `block`: keeps what it declared if its header line was valid.
    mutating func close(_ block: Block) {
        state = .topLevel
        guard block.isValid else { return }
        switch block.kind {
        case .app(let app):
            if app.reconcile != nil, app.apiKey == nil, let line = block.seenOptions["reconcile"] {
                reconcileWithoutKey.append((app.bundleId, line))
            }
            apps.append(app)
        case .webhook(let options): destinations.append(DestinationConfiguration(name: block.name, kind: .webhook(options)))
        case .file(let options): destinations.append(DestinationConfiguration(name: block.name, kind: .file(options)))
        case .redisStream(let options): destinations.append(DestinationConfiguration(name: block.name, kind: .redisStream(options)))
        case .nats(let options):
            guard checkCredentials(options, block) else { return }
            destinations.append(DestinationConfiguration(name: block.name, kind: .nats(options)))
        case .amqp(let options):
            reportMissing(Self.requiredAMQPOptions, in: block, syntax: "exchange NAME in the block")
            destinations.append(DestinationConfiguration(name: block.name, kind: .amqp(options)))
        case .sqs(var options):
            completeSQS(&options, in: block)
            destinations.append(DestinationConfiguration(name: block.name, kind: .sqs(options)))
        case .cluster(let options):
            cluster = options
            clusterNamesDedupeWindow = block.seenOptions["dedupe-window"] != nil
        case .play(let app): closePlay(app, block)
        case .ignored: break
        }
    }

    /// One option line inside the open block.
    mutating func option(_ line: ConfigLine) {
        guard case .block(var block) = state else { return }
        let head = line.tokens[0]
        let arguments = Array(line.tokens.dropFirst())
        let known: [String]
        switch block.kind {
        case .app: known = Self.appOptions
        case .webhook: known = Self.webhookOptions
        case .file: known = Self.fileOptions
        case .redisStream: known = Self.redisStreamOptions
        case .nats: known = Self.natsOptions
        case .amqp: known = Self.amqpOptions
        case .sqs: known = Self.sqsOptions
        case .cluster: known = Self.clusterOptions
        case .play: known = Self.playOptions
        case .ignored: return
        }
        guard known.contains(head.text) else {
            report(.unknownOption, at: head, "unknown option '\(head.text)' in \(block.label) (expected one of: \(known.joined(separator: ", ")))")
            return
        }
        if head.text != "header" {
            if let first = block.seenOptions[head.text] {
                report(.duplicate, at: head, "duplicate option '\(head.text)' in \(block.label) (already given at line \(first); it may appear once)")
                return
            }
            block.seenOptions[head.text] = head.line
        }
        switch block.kind {
        case .app(var app):
            appOption(head, arguments, &app)
            block.kind = .app(app)
        case .webhook(var options):
            webhookOption(head, arguments, &options)
            block.kind = .webhook(options)
        case .file(var options):
            fileOption(head, arguments, &options)
            block.kind = .file(options)
        case .redisStream(var options):
            redisStreamOption(head, arguments, &options)
            block.kind = .redisStream(options)
        case .nats(var options):
            natsOption(head, arguments, &options)
            block.kind = .nats(options)
        case .amqp(var options):
            amqpOption(head, arguments, &options)
            block.kind = .amqp(options)
        case .sqs(var options):
            sqsOption(head, arguments, &options)
            block.kind = .sqs(options)
        case .cluster(var options):
            clusterOption(head, arguments, &options)
            block.kind = .cluster(options)
        case .play(var app):
            playOption(head, arguments, &app)
            block.kind = .play(app)
        case .ignored:
            break
        }
        state = .block(block)
    }

    private mutating func appOption(_ head: ConfigToken, _ arguments: [ConfigToken], _ app: inout AppConfiguration) {
        switch head.text {
        case "apple-id":
            guard arity(head, arguments, 1...1, "apple-id NUMBER") else { return }
            if let id = value(arguments[0], "apple-id", { text throws(ConfigValueError) in try ConfigValue.integer(text, in: 1...Int.max) }) {
                app.appleId = UInt64(id)
            }
        case "api-key":
            guard arity(head, arguments, 3...3, "api-key KEY-FILE KEY-ID ISSUER-ID") else { return }
            if (try? Self.issuerId(arguments[1].text)) != nil, (try? Self.apiKeyId(arguments[2].text)) != nil {
                report(.invalidValue, at: arguments[1], "the key id and the issuer id are swapped (expected api-key KEY-FILE KEY-ID ISSUER-ID)")
                return
            }
            let path = pathValue(arguments[0], "api-key file")
            let keyId = value(arguments[1], "api-key key id", Self.apiKeyId)
            let issuerId = value(arguments[2], "api-key issuer id", Self.issuerId)
            if let path, let keyId, let issuerId { app.apiKey = APIKeyFile(path: path, keyId: keyId, issuerId: issuerId) }
        case "reconcile":
            reconcileOption(head, arguments, &app)
        default:
            guard arity(head, arguments, 1...1, "shared-secret SECRET") else { return }
            app.sharedSecret = secretValue(arguments[0], "shared-secret")
        }
    }

    /// `reconcile every DURATION overlap DURATION`.
    private mutating func reconcileOption(_ head: ConfigToken, _ arguments: [ConfigToken], _ app: inout AppConfiguration) {
        let syntax = "reconcile every DURATION overlap DURATION"
        guard arity(head, arguments, 4...4, syntax) else { return }
        for (token, keyword) in [(arguments[0], "every"), (arguments[2], "overlap")] where token.text != keyword {
            report(.invalidValue, at: token, "expected '\(keyword)' here, not '\(token.text)' (\(syntax))")
            return
        }
        let every = value(arguments[1], "reconcile interval") { text throws(ConfigValueError) in
            let interval = try ConfigValue.duration(text)
            // Each pass costs API calls against Apple's rate limit; a minute is plenty often.
            guard interval >= .seconds(60) else { throw ConfigValueError("'\(text)' is shorter than 1m (Apple rate-limits the API)") }
            return interval
        }
        let overlap = value(arguments[3], "reconcile overlap") { text throws(ConfigValueError) in
            let overlap = try ConfigValue.duration(text)
            guard overlap <= .seconds(180 * 86_400) else { throw ConfigValueError("'\(text)' is longer than 180d (Apple keeps 180 days of history)") }
            return overlap
        }
        if let every, let overlap { app.reconcile = ReconcileSchedule(every: every, overlap: overlap) }
    }

    /// App Store Connect key ids: 10 upper-case letters and digits (e.g. `ABC123DEFG`).
    static func apiKeyId(_ text: String) throws(ConfigValueError) -> String {
        guard text.utf8.count == 10, text.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) }) else {
            throw ConfigValueError("'\(text.prefix(40))' is not a key id (expected 10 upper-case letters and digits, e.g. ABC123DEFG)")
        }
        return text
    }

    /// Issuer ids are UUIDs (`57246542-96fe-1a63-e053-0824d011072a`).
    static func issuerId(_ text: String) throws(ConfigValueError) -> String {
        let groups = text.split(separator: "-", omittingEmptySubsequences: false)
        let hex = { (group: Substring) in group.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x66) } }
        guard groups.map(\.count) == [8, 4, 4, 4, 12], groups.allSatisfy(hex) else {
            throw ConfigValueError("'\(text.prefix(60))' is not an issuer id (expected a UUID such as 57246542-96fe-1a63-e053-0824d011072a)")
        }
        return text
    }

    private mutating func fileOption(_ head: ConfigToken, _ arguments: [ConfigToken], _ options: inout FileQueueOptions) {
        switch head.text {
        case "rotate":
            guard arity(head, arguments, 2...2, "rotate SIZE DURATION") else { return }
            if let size = value(arguments[0], "rotate size", Self.positiveSize) { options.rotateSize = size }
            if let interval = value(arguments[1], "rotate interval", Self.positiveDuration) { options.rotateInterval = interval }
        default:
            guard arity(head, arguments, 1...1, "compress gzip|none") else { return }
            if let compression = value(arguments[0], "compress", { text throws(ConfigValueError) in
                guard let value = FileQueueOptions.Compression(rawValue: text) else { throw ConfigValueError("'\(text)' is not gzip or none") }
                return value
            }) {
                options.compression = compression
            }
        }
    }

    /// `com.acme.journal`: letters, digits, `.` and `-` (Apple's bundle id alphabet).
    static func bundleId(_ text: String) throws(ConfigValueError) -> String {
        guard !text.isEmpty, text.unicodeScalars.allSatisfy({ ConfigLexer.isASCIILetter($0) || ("0"..."9").contains($0) || $0 == "." || $0 == "-" }) else {
            throw ConfigValueError("'\(text)' is not a bundle id (expected letters, digits, '.' and '-', e.g. com.example.app)")
        }
        return text
    }

    /// Destination names become directory names and metric labels: keep them tame.
    static func destinationName(_ text: String) throws(ConfigValueError) -> String {
        guard !text.isEmpty, text.count <= 64, text != ".", text != "..",
              text.unicodeScalars.allSatisfy({ ConfigLexer.isASCIILetter($0) || ("0"..."9").contains($0) || $0 == "." || $0 == "-" || $0 == "_" })
        else {
            throw ConfigValueError("'\(text)' is not a destination name (expected up to 64 letters, digits, '-', '_' and '.')")
        }
        return text
    }

    /// Stands in for an invalid Redis URL so the block's options can still be checked.
    static let placeholderRedisURL = RedisURL(usesTLS: false, host: "invalid", hostKind: .hostname, port: RedisURL.defaultPort,
                                              user: nil, password: nil, database: 0)

    /// Stands in for an invalid URL so the block's options can still be checked.
    static let placeholderURL = WebhookURL(
        scheme: .https, host: "invalid", hostKind: .hostname, port: 443, pathAndQuery: "/", absoluteString: "https://invalid/")
}
