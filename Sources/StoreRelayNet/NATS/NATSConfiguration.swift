import Dispatch
import StoreRelayCore

/// How a `NATSClient` connects and authenticates. Every field but the URL has a default.
public struct NATSConfiguration: Sendable {
    public var url: NATSURL
    /// CONNECT's `user` and `pass`, or its `auth_token`: one or the other.
    public var user: String?
    public var password: String?
    public var token: String?
    /// A PEM file of CAs trusted besides the system store, for TLS.
    public var caFile: String?
    /// Resolution, connect, TLS, INFO and CONNECT's PONG together.
    public var connectTimeout: Duration = .seconds(5)
    /// Shown by the server's monitoring (`connz`).
    public var clientName = "storerelay"
    public var parserLimits = NATSParser.Limits()
    /// Name resolution, on a serial queue per host name.
    public var resolver: any HostResolver = SystemHostResolver()
    /// Where completions run. Keep them short.
    public var callbackQueue: DispatchQueue = .global()
    public var logger: Logger = .disabled

    public init(url: NATSURL) { self.url = url }

    /// The TLS identity the connection upgrades with.
    var tlsIdentity: TLSClientIdentity { TLSClientIdentity(caFile: caFile) }
}
