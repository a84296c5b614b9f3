#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An absolute `http` or `https` URL, split into what an HTTP/1.1 client needs
/// (RFC 3986 §3): scheme, host (IPv6 literals without brackets), port and the request target.
public struct HTTPURL: Sendable, Hashable, CustomStringConvertible {
    public enum Scheme: String, Sendable, Hashable {
        case http, https
        public var defaultPort: UInt16 { self == .http ? 80 : 443 }
    }

    public let scheme: Scheme
    /// Lowercased host name, or an IP literal (IPv6 without brackets).
    public let host: String
    public let port: UInt16
    /// Path and query, never empty: the request target of the request line (RFC 9112 §3.2.1).
    public let pathAndQuery: String

    /// True when `host` is an IPv4 or IPv6 literal: no name resolution, no SNI.
    public var isIPLiteral: Bool { Self.isIPv4(host) || Self.isIPv6(host) }

    /// The `Host` header value: brackets around IPv6, the port only when not the default.
    public var hostHeader: String {
        let name = Self.isIPv6(host) ? "[\(host)]" : host
        return port == scheme.defaultPort ? name : "\(name):\(port)"
    }

    public var description: String { "\(scheme.rawValue)://\(hostHeader)\(pathAndQuery)" }

    /// Parses `string`; user info, other schemes and malformed authorities are refused.
    public init(_ string: String) throws(HTTPClientError) {
        func invalid(_ why: String) -> HTTPClientError {
            HTTPClientError(.invalidRequest, "invalid URL \(string): \(why)")
        }
        guard let colon = string.firstIndex(of: ":"), string[colon...].hasPrefix("://") else {
            throw invalid("no scheme")
        }
        guard let scheme = Scheme(rawValue: string[..<colon].lowercased()) else {
            throw invalid("scheme must be http or https")
        }
        let rest = string[string.index(colon, offsetBy: 3)...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        var target = rest[authorityEnd...]
        if let hash = target.firstIndex(of: "#") { target = target[..<hash] }
        guard !authority.contains("@") else { throw invalid("user info is not supported") }

        var host: Substring
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw invalid("unclosed IPv6 literal") }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw invalid("junk after IPv6 literal") }
                portText = after.dropFirst()
            }
            guard Self.isIPv6(String(host)) else { throw invalid("bad IPv6 literal") }
        } else if let colon = authority.firstIndex(of: ":") {
            host = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        } else {
            host = authority
        }
        guard !host.isEmpty else { throw invalid("empty host") }
        guard host.utf8.allSatisfy(Self.isHostByte) else { throw invalid("bad host") }
        var port = scheme.defaultPort
        if let portText {
            guard let value = UInt16(portText), value > 0 else { throw invalid("bad port") }
            port = value
        }
        guard !target.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F || !$0.isASCII }) else {
            throw invalid("the path must be percent-encoded ASCII without spaces")
        }
        self.scheme = scheme
        self.host = host.lowercased()
        self.port = port
        self.pathAndQuery = target.isEmpty ? "/" : (target.hasPrefix("/") ? String(target) : "/" + target)
    }

    /// Letters, digits, `-`, `.`, `_` and (inside IPv6 literals) `:`; no percent-encoding.
    private static func isHostByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
             UInt8(ascii: "_"), UInt8(ascii: ":"):
            return true
        default:
            return false
        }
    }

    static func isIPv4(_ text: String) -> Bool {
        var address = in_addr()
        return inet_pton(AF_INET, text, &address) == 1
    }

    static func isIPv6(_ text: String) -> Bool {
        var address = in6_addr()
        return inet_pton(AF_INET6, text, &address) == 1
    }
}
