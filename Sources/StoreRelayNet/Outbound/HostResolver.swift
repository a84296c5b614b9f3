
/// Turns a host name into addresses to try in order: the one seam through which every
/// outbound connection (the HTTP client, the Redis client, any later protocol client) finds
/// its peer. Called only on a serial queue dedicated to that host (`ResolverQueues`), so an
/// implementation may block (getaddrinfo does) without delaying connections to other hosts.
/// Tests inject their own.
///
/// What it throws reaches the protocol client whole (`OutboundError.resolverError`), which
/// words its own failure from it.
public protocol HostResolver: Sendable {
    func resolve(host: String, port: UInt16) throws -> [SocketAddress]
}

/// The system resolver (`StoreRelayNet.SystemResolver`): `getaddrinfo` for TCP, addresses in
/// the order it prefers (RFC 6724).
public struct SystemHostResolver: HostResolver {
    public init() {}

    public func resolve(host: String, port: UInt16) throws(SocketError) -> [SocketAddress] {
        try SystemResolver.resolve(host: host, port: port, passive: false)
    }
}
