#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An IPv4 or IPv6 socket address, held by value in a `sockaddr_storage`.
struct SocketAddress: CustomStringConvertible {
    var storage = sockaddr_storage()
    var length = socklen_t(MemoryLayout<sockaddr_storage>.size)

    init() {}

    /// Splits `host:port` or `[v6]:port`; nil when malformed.
    static func split(_ address: String) -> (host: String, port: UInt16)? {
        let host: Substring
        let portText: Substring
        if address.hasPrefix("[") {
            guard let close = address.firstIndex(of: "]") else { return nil }
            host = address[address.index(after: address.startIndex)..<close]
            let rest = address[address.index(after: close)...]
            guard rest.hasPrefix(":") else { return nil }
            portText = rest.dropFirst()
        } else {
            guard let colon = address.lastIndex(of: ":") else { return nil }
            host = address[..<colon]
            portText = address[address.index(after: colon)...]
            if host.contains(":") { return nil }
        }
        guard !host.isEmpty, let port = UInt16(portText) else { return nil }
        return (String(host), port)
    }

    /// Resolves `host:port` for a passive (listening) socket. `*` means every IPv4 address.
    static func resolve(_ address: String) throws(HTTPServerError) -> SocketAddress {
        guard let (host, port) = split(address) else {
            throw HTTPServerError(.invalidAddress, "listen address '\(address)' is not host:port")
        }
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host == "*" ? "0.0.0.0" : host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            throw HTTPServerError(.resolutionFailed, "cannot resolve listen host '\(host)'")
        }
        defer { freeaddrinfo(list) }
        var result = SocketAddress()
        withUnsafeMutableBytes(of: &result.storage) { target in
            target.copyMemory(from: UnsafeRawBufferPointer(start: first.pointee.ai_addr, count: Int(first.pointee.ai_addrlen)))
        }
        result.length = first.pointee.ai_addrlen
        return result
    }

    var family: Int32 { Int32(storage.ss_family) }

    var port: Int {
        withUnsafeBytes(of: storage) { raw in
            family == AF_INET6
                ? Int(UInt16(bigEndian: raw.load(as: sockaddr_in6.self).sin6_port))
                : Int(UInt16(bigEndian: raw.load(as: sockaddr_in.self).sin_port))
        }
    }

    /// `1.2.3.4:80` or `[::1]:80`.
    var description: String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        var copy = storage
        return withUnsafePointer(to: &copy) { pointer in
            pointer.withMemoryRebound(to: UInt8.self, capacity: MemoryLayout<sockaddr_storage>.size) { bytes in
                if family == AF_INET6 {
                    let offset = MemoryLayout<sockaddr_in6>.offset(of: \.sin6_addr)!
                    inet_ntop(AF_INET6, bytes + offset, &text, socklen_t(text.count))
                    return "[" + Self.decode(text) + "]:\(port)"
                }
                let offset = MemoryLayout<sockaddr_in>.offset(of: \.sin_addr)!
                inet_ntop(AF_INET, bytes + offset, &text, socklen_t(text.count))
                return Self.decode(text) + ":\(port)"
            }
        }
    }

    private static func decode(_ text: [CChar]) -> String {
        String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Calls `body` with the address as a `sockaddr` pointer.
    func withSockAddr<Result>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> Result) -> Result {
        var copy = storage
        return withUnsafePointer(to: &copy) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, length) }
        }
    }

    /// Calls `body` to fill the address (accept, getsockname).
    mutating func fill(_ body: (UnsafeMutablePointer<sockaddr>, UnsafeMutablePointer<socklen_t>) -> Int32) -> Int32 {
        length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        var length = length
        defer { self.length = length }
        return withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, &length) }
        }
    }
}
