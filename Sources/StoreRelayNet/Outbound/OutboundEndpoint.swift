
/// Where an outbound connection goes: a host name or IP literal and a port, in plain TCP or
/// in TLS with the given trust and identity.
public struct OutboundEndpoint: Sendable, Hashable {
    public var host: String
    public var port: UInt16
    /// nil: plain TCP. Otherwise TLS 1.2+, the server verified against the system store plus
    /// the identity's extra CAs, and its certificate checked for `host` (SNI names it too).
    public var tls: TLSClientIdentity?

    public init(host: String, port: UInt16, tls: TLSClientIdentity? = nil) {
        self.host = host
        self.port = port
        self.tls = tls
    }
}

/// What a TLS client trusts and presents: all that tells one client `TLSContext` from another,
/// so connections with equal identities share one context (`OutboundConnector`).
public struct TLSClientIdentity: Sendable, Hashable {
    /// A PEM file of CAs trusted besides the system store.
    public var caFile: String?
    /// For a server that authenticates its clients (mutual TLS): the PEM chain and key.
    public var certificateChainFile: String?
    public var privateKeyFile: String?

    public init(caFile: String? = nil, certificateChainFile: String? = nil, privateKeyFile: String? = nil) {
        self.caFile = caFile
        self.certificateChainFile = certificateChainFile
        self.privateKeyFile = privateKeyFile
    }
}
