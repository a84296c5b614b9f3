/// An absolute `http` or `https` URL, split into what an HTTP/1.1 client needs (RFC 3986 §3):
/// scheme, host (IPv6 without brackets) and its kind, port, and the request target.
///
/// The one URL parser: webhook destinations in routes.conf, `simulate --url` and `dlq --url`
/// all go through it, so what is accepted is exactly what is documented. The host follows
/// `HostPort`'s rules (the one `host:port` parser). Strict: no credentials (use a header),
/// no fragment (never sent), no spaces or controls (percent-encode).
public struct HTTPURL: Sendable, Hashable, CustomStringConvertible {
    public enum Scheme: String, Sendable, Hashable {
        case http, https
        public var defaultPort: UInt16 { self == .http ? 80 : 443 }
    }

    public let scheme: Scheme
    /// Lowercased host name, or an IP address (IPv6 without brackets).
    public let host: String
    /// How the host was written: decides resolution, and SNI (never sent for an address).
    public let hostKind: HostPort.HostKind
    /// The explicit port, else the scheme's default.
    public let port: UInt16
    /// Path and query, never empty: the request target of the request line (RFC 9112 §3.2.1).
    public let pathAndQuery: String
    /// The URL as written.
    public let absoluteString: String

    public var usesTLS: Bool { scheme == .https }

    /// True when `host` is an IPv4 or IPv6 address: no name resolution, no SNI.
    public var isIPLiteral: Bool { hostKind != .hostname }

    /// True when the host is this machine's loopback (127.0.0.0/8, ::1, `localhost`): the
    /// only place a plaintext `http://` carries credentials without crossing a network.
    public var isLoopback: Bool { HostPort.isLoopback(host: host, kind: hostKind) }

    /// The `Host` header value: brackets around IPv6, the port only when not the default.
    public var hostHeader: String {
        let name = hostKind == .ipv6 ? "[\(host)]" : host
        return port == scheme.defaultPort ? name : "\(name):\(port)"
    }

    public var description: String { absoluteString }

    /// Parses `http(s)://host[:port][/path][?query]`.
    public static func parse(_ text: String) throws(AddressError) -> HTTPURL {
        guard let colon = text.firstIndex(of: ":"), text[colon...].hasPrefix("://") else {
            throw AddressError("'\(text.prefix(80))' is not a URL (expected http://HOST/PATH or https://HOST/PATH)")
        }
        guard let scheme = Scheme(rawValue: text[..<colon].lowercased()) else {
            throw AddressError("unsupported URL scheme '\(text[..<colon].prefix(20))' (expected http or https)")
        }
        if text.unicodeScalars.contains(where: { $0.value < 0x21 || $0.value >= 0x7F }) {
            throw AddressError("the URL contains a space, a control or a non-ASCII character (expected a percent-encoded URL)")
        }
        if text.contains("#") { throw AddressError("the URL has a fragment '#...' (expected none: fragments are never sent)") }
        let rest = text[text.index(colon, offsetBy: 3)...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        let target = rest[authorityEnd...]
        if authority.contains("@") {
            throw AddressError("the URL contains credentials (expected none: send them in a header, e.g. routes.conf's 'header Authorization ...')")
        }
        guard !authority.isEmpty else { throw AddressError("the URL has no host (expected http(s)://HOST/...)") }

        let hostPart: Substring
        var portPart: Substring?
        let kind: HostPort.HostKind
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw AddressError("missing ']' after the IPv6 address in the URL") }
            hostPart = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw AddressError("unexpected '\(after)' after the IPv6 address in the URL") }
                portPart = after.dropFirst()
            }
            guard HostPort.isIPv6(hostPart) else { throw AddressError("'\(hostPart)' is not an IPv6 address") }
            kind = .ipv6
        } else {
            if let colon = authority.firstIndex(of: ":") {
                hostPart = authority[..<colon]
                portPart = authority[authority.index(after: colon)...]
            } else {
                hostPart = authority
            }
            kind = try HostPort.hostKind(hostPart)
        }
        var port = scheme.defaultPort
        if let portPart {
            guard let value = HostPort.parsePort(portPart), value > 0 else {
                throw AddressError("'\(portPart)' is not a port (expected a number from 1 to 65535)")
            }
            port = value
        }
        return HTTPURL(
            scheme: scheme, host: hostPart.lowercased(), hostKind: kind, port: port,
            pathAndQuery: target.isEmpty ? "/" : (target.hasPrefix("?") ? "/" + target : String(target)),
            absoluteString: text)
    }

    public init(scheme: Scheme, host: String, hostKind: HostPort.HostKind, port: UInt16, pathAndQuery: String, absoluteString: String) {
        self.scheme = scheme
        self.host = host
        self.hostKind = hostKind
        self.port = port
        self.pathAndQuery = pathAndQuery
        self.absoluteString = absoluteString
    }
}
