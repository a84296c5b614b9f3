import StoreRelayNet
import StoreRelayCore

/// The whole resolved configuration of one StoreRelay process: what routes.conf says, with
/// every default filled in.
///
/// A value: parse a new one on SIGHUP and swap it in whole; nothing here changes afterwards.
/// Relative paths are kept exactly as written; they are relative to the working directory.
public struct GatewayConfiguration: Sendable {
    /// Default values, in one place so documentation, parser and tests agree.
    public enum Defaults {
        public static let listen = ListenAddress(host: "0.0.0.0", port: 8080, kind: .ipv4)
        public static let path = "/appstore/notifications"
        public static let admin = ListenAddress(host: "127.0.0.1", port: 9090, kind: .ipv4)
        public static let dataDirectory = "./data"
        public static let maxBodySize = 1 << 20
        public static let readTimeout: Duration = .seconds(10)
        /// Half the read timeout: a head is a few hundred bytes, sent at once by any real client.
        public static let headerTimeout: Duration = .seconds(5)
        /// Bytes per second; Apple's notifications (up to ~18 KB) arrive in one go.
        public static let minBodyRate = 1 << 10
        public static let idleTimeout: Duration = .seconds(60)
        public static let maxConnections = 1024
        /// A quarter of the total: one client (or one flood) cannot take every connection.
        public static let maxConnectionsPerAddress = 256
        public static let dedupeWindow: Duration = .seconds(30 * 86_400)
        public static let minimumDedupeWindow: Duration = .seconds(7 * 86_400)
        public static let shutdownGrace: Duration = .seconds(10)
        public static let maximumShutdownGrace: Duration = .seconds(600)
        public static let recentEvents = 2_000
        public static let eventLogRetention: Duration = .seconds(30 * 86_400)
        public static let environments: [AppStoreEnvironment] = [.production, .sandbox]
    }

    /// The file this configuration was read from, as named to the parser.
    public var sourceFile: String
    /// Public listener address (`listen`); default 0.0.0.0:8080.
    public var listen: ListenAddress
    /// POST paths of the public listener (`path`), in file order; default
    /// `/appstore/notifications` for every accepted environment.
    public var paths: [NotificationPath]
    /// TLS files for the public listener (`tls`); nil: plain HTTP behind a proxy.
    public var tls: TLSFiles?
    /// Admin listener address (`admin`); default 127.0.0.1:9090.
    public var admin: ListenAddress
    /// Admin bearer token (`admin-token`); nil: generated at start into `DATA/admin.token`.
    public var adminToken: ConfigSecret?
    /// Directory of the journal, file queues and dead letters (`data`); default ./data.
    public var dataDirectory: String
    /// Largest accepted request body in bytes (`max-body`); default 1MiB.
    public var maxBodySize: Int
    /// Longest a client may take to send a request's headers and body (`read-timeout`);
    /// default 10s. Slower clients get 408.
    public var readTimeout: Duration
    /// Longest a client may take to send a request's head (`header-timeout`), counted from
    /// the accept for a connection's first request; default 5s. Slower clients get 408.
    public var headerTimeout: Duration
    /// Slowest a request body may arrive, in bytes per second after a 2 s grace
    /// (`min-body-rate`); default 1KiB, 0 turns the check off. Slower clients get 408.
    public var minBodyRate: Int
    /// Longest an idle keep-alive connection is kept open (`idle-timeout`); default 60s.
    public var idleTimeout: Duration
    /// Open public connections allowed at once (`max-connections`); default 1024.
    public var maxConnections: Int
    /// Open public connections allowed from one client (`max-connections-per-address`): an IPv4
    /// address or an IPv6 /64; default 256. Behind a proxy every connection has the proxy's
    /// address: raise it to `max-connections` there.
    public var maxConnectionsPerAddress: Int
    /// How long notification ids are remembered for de-duplication (`dedupe-window`);
    /// default 30d. A notification signed before it is quarantined as stale: a replay of it
    /// could not be told from a first delivery.
    public var dedupeWindow: Duration
    /// On SIGTERM, how long deliveries in flight may take to finish (`shutdown-grace`);
    /// default 10s. What is unfinished then resumes from the journal at the next start.
    public var shutdownGrace: Duration
    /// Finished events the admin API remembers with their delivery state (`recent-events`);
    /// default 2000, a few KB each. Older ones answer from their dead letters, if any.
    public var recentEvents: Int
    /// `event-log DURATION`: how long the event log keeps each event (default 30d).
    public var eventLogRetention: Duration = Defaults.eventLogRetention
    /// Extra trusted root certificate files (`trust-root`), in file order, each for the
    /// environments it names; Apple Root CA - G3 is always trusted in addition.
    public var trustRoots: [TrustRoot]
    /// `verify-nested yes`: verify every JWS nested in a notification on its own (chain,
    /// validity at its own date, ES256). Default `no`: a nested JWS whose header is the
    /// notification's is covered by the notification's signature, one that differs is
    /// verified in full (README, "What verification checks").
    public var verifyNested = false
    /// Accepted environments (`environments`), in file order; default production, sandbox.
    public var environments: [AppStoreEnvironment]
    /// Declared apps (`app`), in file order; empty: every bundle id is accepted.
    public var apps: [AppConfiguration]
    /// The primary shared secret for V1 notifications of every app (`shared-secret`).
    public var sharedSecret: ConfigSecret?
    /// Declared destinations, in file order.
    public var destinations: [DestinationConfiguration]
    /// The frozen route table.
    public var routes: RouteTable
    /// `apple-api-url`: the App Store Server API base URL for both environments; nil: Apple's.
    public var appleAPI: EndpointOverride?
    /// `play PACKAGE { ... }`: declared Google Play apps, in file order; empty: no Play push is
    /// accepted (a `path ... play` line needs at least one).
    public var playApps: [PlayAppConfiguration] = []
    /// `google-certs-url`: where the push-token keys are fetched; nil: Google's
    /// (`defaultGoogleCertsURL`).
    public var googleCerts: EndpointOverride?
    /// `google-api-url`: the Play Developer API base URL; nil: Google's.
    public var googleAPI: EndpointOverride?
    /// `tracing otlp URL`: the OTLP/HTTP collector spans are exported to; nil: none are.
    public var tracing: TracingConfiguration?
    /// `trusted-proxy`: the proxies in front of the admin listener whose `X-Forwarded-For`
    /// names the client (the login throttle keys failures by it); empty: the peer address is
    /// the client, whatever a request says.
    public var trustedProxies: [IPAddressRange] = []
    /// `cluster`: the shared Redis or Valkey server of cluster mode; nil: single-node mode
    /// with its own journal (the default).
    public var cluster: ClusterConfiguration?
    /// `operational-events -> NAME`, `intake-silence`, `disk-low`: the gateway's own events.
    public var operationalEvents = OperationalEventsConfiguration()

    public init(
        sourceFile: String = "routes.conf",
        listen: ListenAddress = Defaults.listen,
        paths: [NotificationPath] = [NotificationPath(path: Defaults.path)],
        tls: TLSFiles? = nil,
        admin: ListenAddress = Defaults.admin,
        adminToken: ConfigSecret? = nil,
        dataDirectory: String = Defaults.dataDirectory,
        maxBodySize: Int = Defaults.maxBodySize,
        readTimeout: Duration = Defaults.readTimeout,
        headerTimeout: Duration = Defaults.headerTimeout,
        minBodyRate: Int = Defaults.minBodyRate,
        idleTimeout: Duration = Defaults.idleTimeout,
        maxConnections: Int = Defaults.maxConnections,
        maxConnectionsPerAddress: Int = Defaults.maxConnectionsPerAddress,
        dedupeWindow: Duration = Defaults.dedupeWindow,
        shutdownGrace: Duration = Defaults.shutdownGrace,
        recentEvents: Int = Defaults.recentEvents,
        trustRoots: [TrustRoot] = [],
        environments: [AppStoreEnvironment] = Defaults.environments,
        apps: [AppConfiguration] = [],
        sharedSecret: ConfigSecret? = nil,
        destinations: [DestinationConfiguration] = [],
        routes: RouteTable = RouteTable(rules: [])
    ) {
        self.sourceFile = sourceFile
        self.listen = listen
        self.paths = paths
        self.tls = tls
        self.admin = admin
        self.adminToken = adminToken
        self.dataDirectory = dataDirectory
        self.maxBodySize = maxBodySize
        self.readTimeout = readTimeout
        self.headerTimeout = headerTimeout
        self.minBodyRate = minBodyRate
        self.idleTimeout = idleTimeout
        self.maxConnections = maxConnections
        self.maxConnectionsPerAddress = maxConnectionsPerAddress
        self.dedupeWindow = dedupeWindow
        self.shutdownGrace = shutdownGrace
        self.recentEvents = recentEvents
        self.trustRoots = trustRoots
        self.environments = environments
        self.apps = apps
        self.sharedSecret = sharedSecret
        self.destinations = destinations
        self.routes = routes
    }

    /// Whether notifications of `environment` are accepted (others are quarantined).
    public func accepts(_ environment: AppStoreEnvironment) -> Bool { environments.contains(environment) }

    /// The declared app with this bundle id, if any.
    public func app(bundleId: String) -> AppConfiguration? { apps.first { $0.bundleId == bundleId } }

    /// The destination with this name, if any.
    public func destination(named name: String) -> DestinationConfiguration? { destinations.first { $0.name == name } }

    /// The configured path entry for a request path, if it is one of ours.
    public func notificationPath(_ path: String) -> NotificationPath? { paths.first { $0.path == path } }
}
