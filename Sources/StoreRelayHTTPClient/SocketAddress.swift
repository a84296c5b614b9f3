#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An IPv4 or IPv6 address and port, stored as the raw `sockaddr` bytes that `connect` takes.
public struct SocketAddress: Sendable, Hashable, CustomStringConvertible {
    private let bytes: [UInt8]

    /// From a `sockaddr` as `getaddrinfo` returns it.
    public init(_ address: UnsafePointer<sockaddr>, length: socklen_t) {
        bytes = Array(UnsafeRawBufferPointer(start: address, count: Int(length)))
    }

    /// From an IP literal ("127.0.0.1", "::1"), or nil when `ip` is neither.
    public init?(ip: String, port: UInt16) {
        var v4 = sockaddr_in()
        if inet_pton(AF_INET, ip, &v4.sin_addr) == 1 {
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = port.bigEndian
            bytes = withUnsafeBytes(of: v4) { Array($0) }
            return
        }
        var v6 = sockaddr_in6()
        if inet_pton(AF_INET6, ip, &v6.sin6_addr) == 1 {
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = port.bigEndian
            bytes = withUnsafeBytes(of: v6) { Array($0) }
            return
        }
        return nil
    }

    /// `AF_INET` or `AF_INET6`.
    var family: Int32 {
        bytes.withUnsafeBytes { Int32($0.load(as: sockaddr.self).sa_family) }
    }

    func withSockaddr<Result>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> Result) -> Result {
        bytes.withUnsafeBytes { raw in
            body(raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(raw.count))
        }
    }

    public var description: String {
        bytes.withUnsafeBytes { raw -> String in
            var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
            if family == AF_INET6 {
                var address = raw.loadUnaligned(as: sockaddr_in6.self)
                inet_ntop(AF_INET6, &address.sin6_addr, &text, socklen_t(text.count))
                return "[\(Self.string(text))]:\(UInt16(bigEndian: address.sin6_port))"
            }
            var address = raw.loadUnaligned(as: sockaddr_in.self)
            inet_ntop(AF_INET, &address.sin_addr, &text, socklen_t(text.count))
            return "\(Self.string(text)):\(UInt16(bigEndian: address.sin_port))"
        }
    }

    private static func string(_ text: [CChar]) -> String {
        String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
