import Dispatch
import StoreRelayCore

/// How a `RedisClient` connects, checks and retries. Every field but the URL has a default.
public struct RedisConfiguration: Sendable {
    public var url: RedisURL
    /// `rediss://`: a PEM file of CAs trusted besides the system store.
    public var caFile: String?
    /// `rediss://` to a server that authenticates its clients (mutual TLS): the PEM
    /// certificate chain and private key this client presents.
    public var clientCertificateFile: String?
    public var clientKeyFile: String?
    /// TCP connect, TLS handshake and the greeting (HELLO, AUTH, SELECT, checks) together.
    public var connectTimeout: Duration = .seconds(5)
    /// A command whose reply takes longer fails with `.timeout`, and the connection with it.
    public var commandTimeout: Duration = .seconds(5)
    /// Reconnecting waits a random time up to `initial · 2^failures`, capped at `maximum`
    /// ("full jitter"), so instances that lost the server together do not return together.
    public var reconnectInitial: Duration = .milliseconds(100)
    public var reconnectMaximum: Duration = .seconds(5)
    /// The most one reply may hold (64 MiB and 2^20 elements in all, nested ones included, by
    /// default): a larger one ends the connection with `.replyTooLarge` as soon as its size
    /// is announced, rather than being buffered while the command timeout runs.
    public var replyLimits = RESPParser.Limits()
    /// Sent as `HELLO ... SETNAME`, shown by `CLIENT LIST` on the server.
    public var clientName: String?
    /// Commands run on every new connection after authentication; `acceptConnection` reads
    /// their replies (error replies included) and returns a sentence to refuse the connection
    /// (nil accepts it). The gateway checks the server's durability settings this way, at
    /// start and on every reconnect.
    public var connectionChecks: [RESPCommand] = []
    public var acceptConnection: (@Sendable ([RESPValue]) -> String?)?
    /// How the server is found (`RedisLocator`): the URL's host, a Redis Cluster's slot map,
    /// or Sentinel. Found primaries are checked with `ROLE` before use.
    public var topology: RedisTopology = .standalone
    /// A cluster topology connects to the primary of this key's slot; every key the client
    /// sends must hash to it (StoreRelay's all carry the hash tag `{storerelay}`).
    public var slotKey = ""
    /// Sentinel: how often the sentinels are asked which primary they name; another answer
    /// than the connected node drops the connection, and the client follows.
    public var sentinelCheckInterval: Duration = .seconds(1)
    /// Name resolution, on a serial queue per host name (the HTTP client's seam too).
    public var resolver: any HostResolver = SystemHostResolver()
    /// Where completions run. Keep them short.
    public var callbackQueue: DispatchQueue = .global()
    public var logger: Logger = .disabled

    public init(url: RedisURL) {
        self.url = url
    }
}
