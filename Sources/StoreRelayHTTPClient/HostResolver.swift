#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Turns a host name into addresses to try in order. Called only on a serial queue dedicated
/// to that host, so an implementation may block (getaddrinfo does) without delaying requests
/// to other hosts. Tests inject their own.
public protocol HostResolver: Sendable {
    func resolve(host: String, port: UInt16) throws(HTTPClientError) -> [SocketAddress]
}

/// The system resolver: `getaddrinfo` for TCP, addresses in the order it prefers (RFC 6724).
public struct SystemHostResolver: HostResolver {
    public init() {}

    public func resolve(host: String, port: UInt16) throws(HTTPClientError) -> [SocketAddress] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
        hints.ai_socktype = SOCK_STREAM
        #endif
        hints.ai_flags = AI_ADDRCONFIG
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            throw HTTPClientError(.resolution, "cannot resolve \(host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(first) }
        var addresses: [SocketAddress] = []
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let entry = cursor {
            if let address = entry.pointee.ai_addr,
               entry.pointee.ai_family == AF_INET || entry.pointee.ai_family == AF_INET6 {
                let resolved = SocketAddress(address, length: entry.pointee.ai_addrlen)
                if !addresses.contains(resolved) { addresses.append(resolved) }
            }
            cursor = entry.pointee.ai_next
        }
        guard !addresses.isEmpty else { throw HTTPClientError(.resolution, "\(host) has no IP address") }
        return addresses
    }
}
