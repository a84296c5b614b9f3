#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An IPv4 or IPv6 socket address, held by value: what `connect` and `bind` take and what
/// `accept`, `getsockname` and `getaddrinfo` give back.
public struct SocketAddress: Sendable, Hashable, CustomStringConvertible {
    private var storage = sockaddr_storage()
    private var length: socklen_t = 0

    /// An empty address, to be filled by `fill` (accept, getsockname).
    init() {}

    /// From a `sockaddr` as `getaddrinfo` returns it.
    public init(_ address: UnsafePointer<sockaddr>, length: socklen_t) {
        let count = min(Int(length), MemoryLayout<sockaddr_storage>.size)
        withUnsafeMutableBytes(of: &storage) { target in
            target.copyMemory(from: UnsafeRawBufferPointer(start: address, count: count))
        }
        self.length = socklen_t(count)
    }

    /// From an IP literal ("127.0.0.1", "::1"), or nil when `ip` is neither.
    public init?(ip: String, port: UInt16) {
        var v4 = sockaddr_in()
        if inet_pton(AF_INET, ip, &v4.sin_addr) == 1 {
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = port.bigEndian
            self.init(copying: v4)
            return
        }
        var v6 = sockaddr_in6()
        if inet_pton(AF_INET6, ip, &v6.sin6_addr) == 1 {
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = port.bigEndian
            self.init(copying: v6)
            return
        }
        return nil
    }

    private init<Address>(copying address: Address) {
        withUnsafeMutableBytes(of: &storage) { target in
            withUnsafeBytes(of: address) { target.copyMemory(from: $0) }
        }
        length = socklen_t(MemoryLayout<Address>.size)
    }

    /// `AF_INET` or `AF_INET6`.
    public var family: Int32 { Int32(storage.ss_family) }

    public var port: UInt16 {
        withUnsafeBytes(of: storage) { raw in
            family == AF_INET6
                ? UInt16(bigEndian: raw.load(as: sockaddr_in6.self).sin6_port)
                : UInt16(bigEndian: raw.load(as: sockaddr_in.self).sin_port)
        }
    }

    /// `1.2.3.4:80` or `[::1]:80`.
    public var description: String {
        HostPort.format(host: host, kind: family == AF_INET6 ? .ipv6 : .ipv4, port: Int(port))
    }

    /// The IP address alone: `1.2.3.4` or `::1`.
    public var host: String {
        withUnsafeBytes(of: storage) { raw -> String in
            var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
            if family == AF_INET6 {
                var address = raw.load(as: sockaddr_in6.self)
                inet_ntop(AF_INET6, &address.sin6_addr, &text, socklen_t(text.count))
            } else {
                var address = raw.load(as: sockaddr_in.self)
                inet_ntop(AF_INET, &address.sin_addr, &text, socklen_t(text.count))
            }
            return Self.string(text)
        }
    }

    private static func string(_ text: [CChar]) -> String {
        String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Calls `body` with the address as a `sockaddr` pointer.
    public func withSockAddr<Result>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> Result) -> Result {
        withUnsafeBytes(of: storage) { raw in
            body(raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), length)
        }
    }

    /// Calls `body` to fill the address (accept, getsockname); returns what `body` returns.
    mutating func fill(_ body: (UnsafeMutablePointer<sockaddr>, UnsafeMutablePointer<socklen_t>) -> Int32) -> Int32 {
        var filled = socklen_t(MemoryLayout<sockaddr_storage>.size)
        defer { length = filled }
        return withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, &filled) }
        }
    }

    /// Only the bytes the address uses take part: two equal addresses compare equal whatever
    /// the rest of their storage holds.
    public static func == (lhs: SocketAddress, rhs: SocketAddress) -> Bool {
        lhs.length == rhs.length && lhs.withSockAddr { left, count in
            rhs.withSockAddr { right, _ in memcmp(left, right, Int(count)) == 0 }
        }
    }

    public func hash(into hasher: inout Hasher) {
        withSockAddr { pointer, count in hasher.combine(bytes: UnsafeRawBufferPointer(start: pointer, count: Int(count))) }
    }
}
