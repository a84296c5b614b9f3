#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `getaddrinfo` for TCP: the addresses of a host in the order the system prefers (RFC 6724),
/// IPv4 and IPv6 only, without duplicates. Blocks: call it off every request path (outbound
/// connections resolve on a queue per host, `ResolverQueues`; servers resolve once, at start).
public enum SystemResolver {
    /// `passive` resolves for listening (a wildcard host binds every address); otherwise for
    /// connecting, skipping families the machine has no address in (`AI_ADDRCONFIG`).
    public static func resolve(host: String, port: UInt16, passive: Bool) throws(SocketError) -> [SocketAddress] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
        hints.ai_socktype = SOCK_STREAM
        #endif
        hints.ai_flags = passive ? AI_PASSIVE | AI_NUMERICSERV : AI_ADDRCONFIG
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            throw SocketError(.resolutionFailed, "cannot resolve \(host): \(String(cString: gai_strerror(status)))")
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
        guard !addresses.isEmpty else { throw SocketError(.resolutionFailed, "\(host) has no IP address") }
        return addresses
    }
}
