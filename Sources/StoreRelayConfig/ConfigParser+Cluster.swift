import StoreRelayNet
import StoreRelayCore

/// `cluster redis://... { ... }`: the shared server of cluster mode and its options.
extension ConfigParser {
    static let clusterOptions = [
        "password", "user", "client-cert",
        "ca-file", "instance-id", "dedupe-window", "claim-after", "wait-replicas", "wait-timeout", "require-aof",
        "require-noeviction", "cluster-key",
    ]

    mutating func beginCluster(_ head: ConfigToken, _ arguments: [ConfigToken], opener: ConfigToken?) {
        // The URL may hold a password: a space in it splits the line, and the words after it
        // must not be quoted back.
        var isValid = secretArity(head, arguments, "cluster redis://[user:password@]host:port[/db] { ... }")
        if isValid, let first = seenDirectives["cluster"] {
            report(.duplicate, at: head, "duplicate 'cluster' (already given at line \(first); it may appear once)")
            isValid = false
        }
        seenDirectives["cluster"] = seenDirectives["cluster"] ?? head.line
        var server: (url: RedisURL, topology: RedisTopology)?
        if isValid {
            server = value(arguments[0], "cluster URL") { text throws(ConfigValueError) in
                do throws(AddressError) { return try RedisTopology.parse(text) } catch { throw ConfigValueError(error.description) }
            }
            isValid = server != nil
        }
        let placeholder = RedisURL(usesTLS: false, host: "invalid", hostKind: .hostname, port: RedisURL.defaultPort,
                                   user: nil, password: nil, database: 0)
        var cluster = ClusterConfiguration(url: server?.url ?? placeholder)
        cluster.topology = server?.topology ?? .standalone
        let block = Block(kind: .cluster(cluster), name: "cluster", label: "cluster",
                          opener: opener ?? head, isValid: isValid)
        if opener != nil { state = .block(block) } else { close(block) }
    }

    mutating func clusterOption(_ head: ConfigToken, _ arguments: [ConfigToken], _ options: inout ClusterConfiguration) {
        if clusterAccessOption(head, arguments, &options) { return }
        switch head.text {
        case "ca-file":
            guard arity(head, arguments, 1...1, "ca-file PEM-FILE") else { return }
            if let path = pathValue(arguments[0], "ca-file") { options.caFile = path }
        case "instance-id":
            guard arity(head, arguments, 1...1, "instance-id NAME") else { return }
            // It names a consumer, a heartbeat key and a file-queue subdirectory.
            if let id = value(arguments[0], "instance-id", Self.instanceId) { options.instanceId = id }
        case "dedupe-window":
            guard arity(head, arguments, 1...1, "dedupe-window DURATION") else { return }
            if let window = value(arguments[0], "dedupe-window", Self.dedupeWindowValue) { options.dedupeWindow = window }
        case "claim-after":
            guard arity(head, arguments, 1...1, "claim-after DURATION") else { return }
            if let after = value(arguments[0], "claim-after", { text throws(ConfigValueError) in
                let after = try ConfigValue.duration(text)
                // Shorter than an attempt's own timeout, a live instance's deliveries would be
                // taken over while they run.
                guard after >= .seconds(1) else { throw ConfigValueError("'\(text)' is shorter than 1s") }
                return after
            }) {
                options.claimAfter = after
            }
        case "wait-replicas":
            guard arity(head, arguments, 1...1, "wait-replicas COUNT") else { return }
            if let count = value(arguments[0], "wait-replicas", { text throws(ConfigValueError) in
                try ConfigValue.integer(text, in: 0...16)
            }) {
                options.waitReplicas = count
            }
        case "cluster-key":
            clusterKey(head, arguments, &options)
        case "wait-timeout":
            guard arity(head, arguments, 1...1, "wait-timeout DURATION") else { return }
            if let timeout = value(arguments[0], "wait-timeout", Self.positiveDuration) { options.waitTimeout = timeout }
        case "require-noeviction":
            guard arity(head, arguments, 1...1, "require-noeviction yes|no") else { return }
            if let required = value(arguments[0], "require-noeviction", ConfigValue.boolean) { options.requireNoEviction = required }
        default:
            guard arity(head, arguments, 1...1, "require-aof yes|no") else { return }
            if let required = value(arguments[0], "require-aof", ConfigValue.boolean) { options.requireAOF = required }
        }
    }

    /// `cluster-key KEY [OTHER-KEY] [unsealed]`: the key every instance seals its records
    /// with; the other key also opens records while one is rotated in or out (README: `OLD
    /// NEW`, then `NEW OLD`, then `NEW`), and `unsealed` accepts records from before the key
    /// was set.
    private mutating func clusterKey(_ head: ConfigToken, _ arguments: [ConfigToken], _ options: inout ClusterConfiguration) {
        guard arity(head, arguments, 1...3, "cluster-key KEY [OTHER-KEY] [unsealed]") else { return }
        var keys: [ConfigSecret] = []
        var acceptsUnsealed = false
        for (index, argument) in arguments.enumerated() {
            if index > 0, argument.text == "unsealed", !acceptsUnsealed {
                acceptsUnsealed = true
                continue
            }
            guard let key = value(argument, "cluster-key", Self.clusterKeyValue) else { return }
            keys.append(key)
        }
        options.clusterKeys = keys
        options.acceptsUnsealed = acceptsUnsealed
    }

    /// At least 32 characters: a shorter key could be guessed offline from one sealed record.
    static func clusterKeyValue(_ text: String) throws(ConfigValueError) -> ConfigSecret {
        guard text.count >= ClusterConfiguration.minimumKeyLength else {
            throw ConfigValueError("the key has \(text.count) characters; it needs at least \(ClusterConfiguration.minimumKeyLength) "
                + "(e.g. openssl rand -hex 32), the same on every instance")
        }
        return ConfigSecret(text)
    }

    /// Letters, digits, `-`, `_` and `.`, up to 64: safe as a directory and a key part.
    static func instanceId(_ text: String) throws(ConfigValueError) -> String {
        guard !text.isEmpty, text.count <= 64, text != ".", text != "..",
              text.unicodeScalars.allSatisfy({ ConfigLexer.isASCIILetter($0) || ("0"..."9").contains($0) || "-_.".unicodeScalars.contains($0) })
        else {
            throw ConfigValueError("'\(text.prefix(80))' is not an instance id (expected up to 64 letters, digits, '-', '_' and '.')")
        }
        return text
    }

    /// A dedupe window: at least 7 days, the longest Apple retries and then some.
    static func dedupeWindowValue(_ text: String) throws(ConfigValueError) -> Duration {
        let window = try positiveDuration(text)
        // Apple retries a notification for up to three days: a week is the least that still
        // recognises every retry.
        guard window >= GatewayConfiguration.Defaults.minimumDedupeWindow else {
            throw ConfigValueError("the window must be at least 7d (Apple retries for up to 3 days)")
        }
        return window
    }
}
