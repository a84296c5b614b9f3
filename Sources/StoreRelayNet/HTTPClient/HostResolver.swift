
/// Turns a host name into addresses to try in order. Called only on a serial queue dedicated
/// to that host, so an implementation may block (getaddrinfo does) without delaying requests
/// to other hosts. Tests inject their own.
public protocol HostResolver: Sendable {
    func resolve(host: String, port: UInt16) throws(HTTPClientError) -> [SocketAddress]
}

/// The system resolver (`StoreRelayNet.SystemResolver`): `getaddrinfo` for TCP, addresses in
/// the order it prefers (RFC 6724).
public struct SystemHostResolver: HostResolver {
    public init() {}

    public func resolve(host: String, port: UInt16) throws(HTTPClientError) -> [SocketAddress] {
        do {
            return try SystemResolver.resolve(host: host, port: port, passive: false)
        } catch {
            throw HTTPClientError(.resolution, error.description)
        }
    }
}
