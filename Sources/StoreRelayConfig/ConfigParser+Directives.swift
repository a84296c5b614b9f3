import StoreRelayNet
import StoreRelayCore

/// Top-level directives: dispatch, and the ones that take no block.
extension ConfigParser {
    mutating func topLevel(_ line: ConfigLine) {
        var tokens = line.tokens
        let head = tokens[0]
        if head.isSyntax("}") {
            report(.strayBrace, at: head, "unexpected '}' (no block is open)")
            return
        }
        var opener: ConfigToken?
        if tokens.count > 1, let last = tokens.last, last.isSyntax("{") {
            opener = tokens.removeLast()
        }
        if line.isDamaged {
            // Follow the structure only; remember the destination name so routes naming it
            // do not add errors of their own.
            if head.text == "destination", tokens.count > 1, destinationLines[tokens[1].text] == nil {
                destinationLines[tokens[1].text] = head.line
            }
            if let opener { state = .block(Block(kind: .ignored, label: "'\(head.text)'", opener: opener, isValid: false)) }
            return
        }
        if head.isSyntax("{") {
            report(.invalidBlock, at: head, "unexpected '{' (expected a block to open at the end of its directive's line, e.g. 'app com.example.app {')")
            state = .block(Block(kind: .ignored, label: "'{'", opener: head, isValid: false))
            return
        }
        if let brace = tokens.first(where: { $0.isSyntax("{") || $0.isSyntax("}") }) {
            report(.invalidBlock, at: brace, "unexpected '\(brace.text)' inside a line (expected '{' at the end of a directive and '}' alone on a line)")
            if let opener { state = .block(Block(kind: .ignored, label: "'\(head.text)'", opener: opener, isValid: false)) }
            return
        }
        let arguments = Array(tokens.dropFirst())
        switch head.text {
        case "app":
            beginApp(head, arguments, opener: opener)
            return
        case "destination":
            beginDestination(head, arguments, opener: opener)
            return
        case "cluster":
            beginCluster(head, arguments, opener: opener)
            return
        case "play":
            beginPlay(head, arguments, opener: opener)
            return
        default:
            break
        }
        guard Self.directives.contains(head.text) else {
            report(.unknownDirective, at: head, "unknown directive '\(head.text)' (expected one of: \(Self.directives.joined(separator: ", ")))")
            if let opener { state = .block(Block(kind: .ignored, label: "'\(head.text)'", opener: opener, isValid: false)) }
            return
        }
        if let opener {
            report(.invalidBlock, at: opener, "'\(head.text)' does not take a block (expected '{' only after app, play, destination or cluster)")
            state = .block(Block(kind: .ignored, label: "'\(head.text)'", opener: opener, isValid: false))
            return
        }
        simpleDirective(head, arguments)
    }

    /// A directive that may appear once; reports the duplicate otherwise.
    mutating func once(_ head: ConfigToken) -> Bool {
        if let first = seenDirectives[head.text] {
            report(.duplicate, at: head, "duplicate '\(head.text)' (already given at line \(first); it may appear once)")
            return false
        }
        seenDirectives[head.text] = head.line
        return true
    }

    private mutating func simpleDirective(_ head: ConfigToken, _ arguments: [ConfigToken]) {
        switch head.text {
        case "listen", "admin":
            guard once(head), arity(head, arguments, 1...1, "\(head.text) HOST:PORT") else { return }
            let address = value(arguments[0], head.text) { text throws(ConfigValueError) in try ListenAddress.parseListen(text) }
            if head.text == "listen" { listen = address } else { admin = address }
        case "path":
            guard arity(head, arguments, 1...2, "path PATH [ENVIRONMENT | play]") else { return }
            pathDirective(arguments)
        case "tls":
            guard once(head), arity(head, arguments, 2...2, "tls CERT-FILE KEY-FILE") else { return }
            if let certificate = pathValue(arguments[0], "tls certificate file"), let key = pathValue(arguments[1], "tls key file") {
                tls = TLSFiles(certificateFile: certificate, privateKeyFile: key)
            }
        case "admin-token":
            guard once(head), arity(head, arguments, 1...1, "admin-token TOKEN") else { return }
            adminToken = value(arguments[0], "admin-token") { text throws(ConfigValueError) in
                guard !text.isEmpty else { throw ConfigValueError("empty value (expected a non-empty secret; is its variable empty?)") }
                // Guessable tokens are the one way into the admin API: require what the
                // generated one has (32 bytes of hex is 64 characters).
                guard text.count >= Self.minimumAdminTokenLength else {
                    throw ConfigValueError("the admin token has \(text.count) characters; use at least \(Self.minimumAdminTokenLength) "
                        + "(for example: openssl rand -hex 32), or leave admin-token out to have one generated")
                }
                return ConfigSecret(text)
            }
        case "data":
            guard once(head), arity(head, arguments, 1...1, "data DIRECTORY") else { return }
            dataDirectory = pathValue(arguments[0], "data")
        case "max-body":
            guard once(head), arity(head, arguments, 1...1, "max-body SIZE") else { return }
            maxBodySize = value(arguments[0], "max-body") { text throws(ConfigValueError) in try Self.positiveSize(text) }
        case "read-timeout", "header-timeout", "idle-timeout":
            guard once(head), arity(head, arguments, 1...1, "\(head.text) DURATION") else { return }
            let duration = value(arguments[0], head.text) { text throws(ConfigValueError) in try Self.positiveDuration(text) }
            switch head.text {
            case "read-timeout": readTimeout = duration
            case "header-timeout": headerTimeout = duration
            default: idleTimeout = duration
            }
        case "min-body-rate":
            guard once(head), arity(head, arguments, 1...1, "min-body-rate SIZE (per second; 0 turns it off)") else { return }
            minBodyRate = value(arguments[0], "min-body-rate") { text throws(ConfigValueError) in
                try ConfigValue.size(text.hasSuffix("/s") ? String(text.dropLast(2)) : text)
            }
        case "max-connections", "max-connections-per-address":
            guard once(head), arity(head, arguments, 1...1, "\(head.text) N") else { return }
            let limit = value(arguments[0], head.text) { text throws(ConfigValueError) in
                try ConfigValue.integer(text, in: 1...1_000_000)
            }
            if head.text == "max-connections" { maxConnections = limit } else { maxConnectionsPerAddress = limit }
        case "recent-events":
            guard once(head), arity(head, arguments, 1...1, "recent-events N") else { return }
            recentEvents = value(arguments[0], "recent-events") { text throws(ConfigValueError) in
                try ConfigValue.integer(text, in: 0...1_000_000)
            }
        case "event-log":
            guard once(head), arity(head, arguments, 1...1, "event-log DURATION (how long events are searchable)") else { return }
            eventLogRetention = value(arguments[0], "event-log", Self.eventLogRetentionValue)
        case "shutdown-grace":
            guard once(head), arity(head, arguments, 1...1, "shutdown-grace DURATION") else { return }
            shutdownGrace = value(arguments[0], "shutdown-grace") { text throws(ConfigValueError) in
                // Zero is allowed: stop at once, deliveries in flight resume after the restart.
                let grace = try ConfigValue.duration(text)
                guard grace <= GatewayConfiguration.Defaults.maximumShutdownGrace else {
                    throw ConfigValueError("'\(text)' is longer than 10m (a process manager kills a stop that slow anyway)")
                }
                return grace
            }
        case "dedupe-window":
            guard once(head), arity(head, arguments, 1...1, "dedupe-window DURATION") else { return }
            dedupeWindow = value(arguments[0], "dedupe-window", Self.dedupeWindowValue)
        case "trusted-proxy":
            guard arity(head, arguments, 1...Int.max, "trusted-proxy ADDRESS-OR-CIDR...") else { return }
            for argument in arguments {
                guard let range = value(argument, "trusted-proxy", Self.addressRange) else { continue }
                if trustedProxies.contains(range) {
                    report(.duplicate, at: argument, "duplicate trusted-proxy '\(argument.text)' (expected each address or block once)")
                } else {
                    trustedProxies.append(range)
                }
            }
        case "trust-root":
            guard arity(head, arguments, 1...5, "trust-root PEM-FILE [ENVIRONMENT...]") else { return }
            guard let file = pathValue(arguments[0], "trust-root") else { return }
            let named = arguments.count > 1 ? environmentList(arguments.dropFirst()) : nil
            trustRoots.append(TrustRoot(path: file, environments: named))
        case "verify-nested":
            guard once(head), arity(head, arguments, 1...1, "verify-nested yes|no") else { return }
            verifyNested = value(arguments[0], "verify-nested", ConfigValue.boolean)
        case "environments":
            guard once(head), arity(head, arguments, 1...Int.max, "environments ENVIRONMENT...") else { return }
            environments = environmentList(arguments[...])
        case "shared-secret":
            guard once(head), arity(head, arguments, 1...1, "shared-secret SECRET") else { return }
            sharedSecret = secretValue(arguments[0], "shared-secret")
        case "route":
            routeDirective(head, arguments)
        case "operational-events", "intake-silence", "disk-low":
            guard once(head) else { return }
            operationalDirective(head, arguments)
        case "apple-api-url":
            guard let (url, caFile) = endpointOverride(head, arguments, WebhookURL.parseWebhook) else { return }
            appleAPI = EndpointOverride(url: url, caFile: caFile)
        case "google-certs-url", "google-api-url":
            googleEndpointDirective(head, arguments)
        case "tracing":
            tracingDirective(head, arguments)
        default:
            preconditionFailure("directive '\(head.text)' listed but not handled")
        }
    }

    /// Environment names, each once, in the order given; bad or repeated ones are reported.
    private mutating func environmentList(_ tokens: ArraySlice<ConfigToken>) -> [AppStoreEnvironment] {
        var list: [AppStoreEnvironment] = []
        for token in tokens {
            guard let environment = value(token, "environment", ConfigValue.environment) else { continue }
            if list.contains(environment) {
                report(.duplicate, at: token, "duplicate environment '\(token.text)' (expected each environment once)")
            } else {
                list.append(environment)
            }
        }
        return list
    }

    private mutating func pathDirective(_ arguments: [ConfigToken]) {
        let token = arguments[0]
        let reserved = ["/healthz", "/readyz"]
        let parsed = value(token, "path") { text throws(ConfigValueError) -> String in
            guard text.hasPrefix("/") else { throw ConfigValueError("'\(text)' does not start with '/' (expected a path like /appstore/notifications)") }
            if text.contains(where: { $0 == "?" || $0 == "#" || $0 == " " || $0 == "%" }) {
                throw ConfigValueError("'\(text)' contains '?', '#', '%' or a space (expected a plain path)")
            }
            if reserved.contains(text) { throw ConfigValueError("'\(text)' is reserved for health checks (expected another path)") }
            return text
        }
        var environment: AppStoreEnvironment?
        var kind = NotificationPath.Kind.appStore
        if arguments.count == 2, arguments[1].text == "play" {
            kind = .googlePlay
            playPathTokens.append(arguments[1])
        } else if arguments.count == 2 {
            guard let bound = value(arguments[1], "path environment (or 'play' for Google Play pushes)", ConfigValue.environment) else { return }
            environment = bound
        }
        guard let path = parsed else { return }
        if let first = pathLines[path] {
            report(.duplicate, at: token, "duplicate path '\(path)' (already given at line \(first); each path may appear once)")
            return
        }
        pathLines[path] = token.line
        paths.append(NotificationPath(path: path, environment: environment, kind: kind))
        if let environment { boundPaths.append((path, environment, arguments[1])) }
    }

    /// An address or CIDR block, with the parser's sentence as the config error.
    static func addressRange(_ text: String) throws(ConfigValueError) -> IPAddressRange {
        do {
            return try IPAddressRange.parse(text)
        } catch {
            throw ConfigValueError(error.description)
        }
    }

    /// The shortest `admin-token` accepted.
    static let minimumAdminTokenLength = 32

    static func positiveSize(_ text: String) throws(ConfigValueError) -> Int {
        let size = try ConfigValue.size(text)
        guard size > 0 else { throw ConfigValueError("'\(text)' is zero (expected at least 1 byte)") }
        return size
    }

    /// At least an hour (a segment's span: less would delete events as they are written)
    /// and at most ten years (a typo such as `30000d` is refused rather than kept forever).
    static func eventLogRetentionValue(_ text: String) throws(ConfigValueError) -> Duration {
        let duration = try ConfigValue.duration(text)
        guard duration >= .seconds(3_600) else { throw ConfigValueError("'\(text)' is shorter than 1h (an event log needs at least an hour)") }
        guard duration <= .seconds(3_650 * 86_400) else { throw ConfigValueError("'\(text)' is longer than 3650d") }
        return duration
    }

    static func positiveDuration(_ text: String) throws(ConfigValueError) -> Duration {
        let duration = try ConfigValue.duration(text)
        guard duration > .zero else { throw ConfigValueError("'\(text)' is zero (expected a duration above zero)") }
        return duration
    }
}
