#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension SocketAddress {
    /// The unit a per-client connection limit counts: an IPv4 address (`203.0.113.9`), or the
    /// /64 of an IPv6 one (`2001:db8:1:2::/64`).
    ///
    /// One IPv6 host is routinely given a whole /64 and can pick a new source address from it
    /// for every connection, so counting IPv6 addresses one by one limits nothing. An
    /// IPv4-mapped IPv6 address (`::ffff:203.0.113.9`, what a dual-stack listener reports
    /// for an IPv4 client) is the IPv4 client it stands for.
    public var addressGroup: String {
        guard family == AF_INET6 else { return host }
        var address = withSockAddr { pointer, _ in
            UnsafeRawPointer(pointer).loadUnaligned(as: sockaddr_in6.self).sin6_addr
        }
        var bytes = withUnsafeBytes(of: address) { Array($0) }
        if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF {
            return bytes[12...].map(String.init).joined(separator: ".")
        }
        // The interface identifier (the low 64 bits) is the host's own choice: drop it.
        for index in 8..<16 { bytes[index] = 0 }
        withUnsafeMutableBytes(of: &address) { $0.copyBytes(from: bytes) }
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        inet_ntop(AF_INET6, &address, &text, socklen_t(text.count))
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) + "/64"
    }
}
