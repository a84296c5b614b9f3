import StoreRelayNet
import StoreRelayCore

/// The routes.conf parser: a state machine fed one lexed line at a time, collecting every
/// error rather than stopping at the first. No I/O; ``GatewayConfiguration/parse(text:fileName:environment:)``
/// drives it.
///
/// The grammar is SPEC.md's "routes.conf" plus two directives of our own for the public HTTP
/// listener, which the SPEC asks for ("idle and read timeouts") without naming:
/// - `read-timeout DURATION` (default 10s): the longest a client may take to send one
///   request, headers and body; a slower client gets 408.
/// - `header-timeout DURATION` (default 5s): the longest it may take to send a request's
///   head, from the accept for a connection's first request; a slower client gets 408.
/// - `min-body-rate SIZE` (default 1KiB, `/s` optional, 0 off): the slowest a body may
///   arrive after a 2 s grace; a slower client gets 408.
/// - `idle-timeout DURATION` (default 60s): how long an idle keep-alive connection is kept.
/// - `max-connections N` (default 1024) and `max-connections-per-address N` (default 256):
///   open connections at once, in all and from one client (an IPv4 address or IPv6 /64). At a
///   limit a connection making the least progress is closed to make room (see
///   `ConnectionLimits` in StoreRelayNet).
/// - `dedupe-window DURATION` (default 30d, at least 7d): how long notification ids are
///   remembered; a notification signed longer ago is quarantined as stale.
/// - `shutdown-grace DURATION` (default 10s): on SIGTERM, how long deliveries in flight may
///   take to finish before the process exits.
/// - `recent-events N` (default 2000): finished events the admin API remembers with their
///   delivery state; an older one still answers with its dead letters.
/// - `event-log DURATION` (default 30d, from 1h to 10 years): how long the event log behind
///   `GET /api/events` keeps each event's summary and delivery states.
/// - `trusted-proxy ADDRESS-OR-CIDR...` (repeatable; default none): the proxies in front of
///   the admin listener whose `X-Forwarded-For` names the client, for the login throttle.
///
/// Directives take their arguments on one line; `app` and `destination` may end their line
/// with `{` to open a block of options, one per line, closed by `}` alone on a line. Blocks do
/// not nest. Single-valued directives and options may appear once; `path`, `trust-root`,
/// `app`, `destination`, `route` and the `header` option repeat.
///
/// Its state is whether a block is open (and which); everything else accumulates the
/// directives seen so far, checked against each other in ``finish()``.
struct ConfigParser {
    /// An open `{ ... }` block.
    struct Block {
        enum Kind {
            case app(AppConfiguration)
            case webhook(WebhookOptions)
            case file(FileQueueOptions)
            case redisStream(RedisStreamOptions)
            case nats(NATSOptions)
            case amqp(AMQPOptions)
            case sqs(SQSOptions)
            case cluster(ClusterConfiguration)
            case play(PlayAppConfiguration)
            /// The block's header line was unusable; its options are skipped, its `}` still closes it.
            case ignored
        }
        var kind: Kind
        /// The app's bundle id or the destination's name.
        var name = ""
        /// What the block belongs to, for messages: `destination 'billing'`.
        var label: String
        /// The `{` token, where an unclosed block is reported.
        var opener: ConfigToken
        /// Whether the header line was valid; an invalid block is checked but not kept.
        var isValid: Bool
        /// Option name to the line it was first given on (single-valued options).
        var seenOptions: [String: Int] = [:]
    }

    enum State {
        case topLevel
        case block(Block)
    }

    /// A comma-list item of a route line, with its position.
    struct Item {
        var text: String
        var line: Int
        var column: Int
    }

    static let directives = [
        "listen", "path", "tls", "admin", "admin-token", "data", "max-body", "read-timeout",
        "header-timeout", "min-body-rate", "idle-timeout", "max-connections", "max-connections-per-address", "dedupe-window",
        "shutdown-grace", "recent-events", "event-log", "trusted-proxy", "trust-root", "environments", "app", "shared-secret", "destination",
        "route", "apple-api-url", "cluster", "tracing", "operational-events", "intake-silence", "disk-low",
        "verify-nested", "play", "google-certs-url", "google-api-url",
    ]

    let file: String
    /// The process environment: what `${NAME}` reads, and where an `sqs` block without
    /// credentials or region finds the usual `AWS_*` variables.
    var environment: [String: String] = [:]
    var state = State.topLevel
    var errors: [ConfigError] = []

    // Directives seen so far; nil or empty means "not given, use the default".
    var seenDirectives: [String: Int] = [:]
    var listen: ListenAddress?
    var paths: [NotificationPath] = []
    var pathLines: [String: Int] = [:]
    var boundPaths: [(path: String, environment: AppStoreEnvironment, token: ConfigToken)] = []
    var tls: TLSFiles?
    var admin: ListenAddress?
    var adminToken: ConfigSecret?
    var dataDirectory: String?
    var maxBodySize: Int?
    var readTimeout: Duration?
    var headerTimeout: Duration?
    var minBodyRate: Int?
    var idleTimeout: Duration?
    var maxConnections: Int?
    var maxConnectionsPerAddress: Int?
    var dedupeWindow: Duration?
    var shutdownGrace: Duration?
    var recentEvents: Int?
    var eventLogRetention: Duration?
    var trustRoots: [TrustRoot] = []
    var verifyNested: Bool?
    var trustedProxies: [IPAddressRange] = []
    var appleAPI: EndpointOverride?
    /// `play` blocks, `google-certs-url`, `google-api-url`.
    var playApps: [PlayAppConfiguration] = []
    var playLines: [String: Int] = [:]
    /// Whether any `play` line was given, valid or not: a broken block is reported once, not
    /// again by every `play` path.
    var playDeclared = false
    var googleCerts: EndpointOverride?
    var googleAPI: EndpointOverride?
    /// `path PATH play` lines, checked against the declared play apps.
    var playPathTokens: [ConfigToken] = []
    var tracing: TracingConfiguration?
    var cluster: ClusterConfiguration?
    /// `operational-events`, `intake-silence`, `disk-low`.
    var operationalEvents = OperationalEventsConfiguration()
    /// The token naming the operational-events destination, checked against the declared ones.
    var operationalEventsToken: ConfigToken?
    /// Whether the cluster block named its own `dedupe-window` (else the top level's applies).
    var clusterNamesDedupeWindow = false
    /// Apps whose block has `reconcile` but no `api-key`, with the line of `reconcile`.
    var reconcileWithoutKey: [(app: String, line: Int)] = []
    var environments: [AppStoreEnvironment]?
    var apps: [AppConfiguration] = []
    var appLines: [String: Int] = [:]
    var sharedSecret: ConfigSecret?
    var destinations: [DestinationConfiguration] = []
    /// Every destination name declared, valid or not, so a broken declaration does not also
    /// make every route naming it an error.
    var destinationLines: [String: Int] = [:]
    var routes: [RouteRule] = []
    var routeDestinationItems: [[Item]] = []

    init(file: String) { self.file = file }

    /// Feeds one line.
    mutating func consume(_ line: ConfigLine) {
        guard let first = line.tokens.first else { return }
        if case .block(let block) = state {
            if first.isSyntax("}") {
                if line.tokens.count > 1 {
                    report(.unexpectedArgument, at: line.tokens[1], "unexpected '\(line.tokens[1].text)' after '}' (expected '}' alone on its line)")
                }
                close(block)
                return
            }
            if let last = line.tokens.last, last.isSyntax("{") || startsTopLevelDirective(line, in: block) {
                // Blocks do not nest, and a directive is not an option: the block must have
                // lost its `}`. Say so once, then read the line as the directive it is.
                report(.unclosedBlock, at: block.opener, "block of \(block.label) is not closed (expected '}' on its own line before line \(line.number))")
                close(block)
                topLevel(line)
                return
            }
            if line.isDamaged { return }
            option(line)
            return
        }
        topLevel(line)
    }

    /// Ends the file: reports an unclosed block and checks directives against each other.
    mutating func finish() -> Result<GatewayConfiguration, ConfigErrors> {
        if case .block(let block) = state {
            report(.unclosedBlock, at: block.opener, "block of \(block.label) is not closed (expected '}' on its own line before the end of the file)")
            close(block)
        }
        return resolve()
    }

    /// Whether `line` begins with a top-level directive that is not an option of `block`.
    private func startsTopLevelDirective(_ line: ConfigLine, in block: Block) -> Bool {
        let head = line.tokens[0]
        guard head.isPlain, Self.directives.contains(head.text) else { return false }
        switch block.kind {
        case .app: return !Self.appOptions.contains(head.text)
        case .webhook: return !Self.webhookOptions.contains(head.text)
        case .file: return !Self.fileOptions.contains(head.text)
        case .redisStream: return !Self.redisStreamOptions.contains(head.text)
        case .nats: return !Self.natsOptions.contains(head.text)
        case .amqp: return !Self.amqpOptions.contains(head.text)
        case .sqs: return !Self.sqsOptions.contains(head.text)
        case .cluster: return !Self.clusterOptions.contains(head.text)
        case .play: return !Self.playOptions.contains(head.text)
        case .ignored:
            let options = Self.playOptions + Self.appOptions + Self.webhookOptions + Self.fileOptions + Self.redisStreamOptions + Self.natsOptions
                + Self.amqpOptions + Self.sqsOptions + Self.clusterOptions
            return !options.contains(head.text)
        }
    }

    mutating func report(_ code: ConfigError.Code, at token: ConfigToken, _ message: String) {
        report(code, line: token.line, column: token.column, message)
    }

    mutating func report(_ code: ConfigError.Code, line: Int, column: Int, _ message: String) {
        errors.append(ConfigError(code: code, file: file, line: line, column: column, message: message))
    }

    /// Checks the argument count of `head`; reports a missing argument where it should have
    /// been, or the first extra one.
    mutating func arity(_ head: ConfigToken, _ arguments: [ConfigToken], _ range: ClosedRange<Int>, _ syntax: String) -> Bool {
        if arguments.count < range.lowerBound {
            let end = (arguments.last ?? head).endColumn
            report(.missingArgument, line: head.line, column: end, "incomplete '\(head.text)' (expected \(syntax))")
            return false
        }
        if arguments.count > range.upperBound {
            let extra = arguments[range.upperBound]
            report(.unexpectedArgument, at: extra, "unexpected '\(extra.text)' (expected \(syntax); quote a value that contains spaces)")
            return false
        }
        return true
    }

    /// Parses `token` with `parse`, reporting `invalid WHAT: reason` on failure.
    mutating func value<T>(_ token: ConfigToken, _ what: String, _ parse: (String) throws(ConfigValueError) -> T) -> T? {
        do {
            return try parse(token.text)
        } catch {
            report(.invalidValue, at: token, "invalid \(what): \(error.message)")
            return nil
        }
    }

    /// A file or directory path argument: anything non-empty, kept as written.
    mutating func pathValue(_ token: ConfigToken, _ what: String) -> String? {
        value(token, what) { text throws(ConfigValueError) in
            guard !text.isEmpty else { throw ConfigValueError("empty path (expected a file or directory)") }
            return text
        }
    }

    /// A secret argument: anything non-empty (an empty secret would match an empty password).
    mutating func secretValue(_ token: ConfigToken, _ what: String) -> ConfigSecret? {
        value(token, what) { text throws(ConfigValueError) in
            guard !text.isEmpty else { throw ConfigValueError("empty value (expected a non-empty secret; is its variable empty?)") }
            return ConfigSecret(text)
        }
    }
}
