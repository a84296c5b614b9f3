import StoreRelayNet
/// The URL a webhook destination posts to, split the way an HTTP client needs it.
///
/// Parsed by hand rather than with Foundation's `URL` so that what is accepted is exactly
/// what is documented, identically on Linux and macOS.
public struct WebhookURL: Sendable, Hashable, CustomStringConvertible {
    /// `http` or `https`, lowercase.
    public let scheme: String
    /// Host without brackets (an IPv6 address is written `[::1]` in the URL).
    public let host: String
    /// What kind of host `host` is (decides SNI: never sent for an IP address).
    public let hostKind: ListenAddress.HostKind
    /// The explicit port, else 80 for http and 443 for https.
    public let port: UInt16
    /// Path and query as sent in the request line; `/` when the URL has no path.
    public let target: String
    /// The URL as written in the configuration.
    public let absoluteString: String

    /// Whether the connection uses TLS (https).
    public var usesTLS: Bool { scheme == "https" }

    /// The `Host` header value: the host (bracketed if IPv6) plus the port when not the default.
    public var hostHeader: String {
        let name = hostKind == .ipv6 ? "[\(host)]" : host
        return port == (usesTLS ? 443 : 80) ? name : "\(name):\(port)"
    }

    public var description: String { absoluteString }

    /// Accepts `http(s)://host[:port][/path][?query]`; rejects credentials and fragments.
    static func parse(_ text: String) throws(ConfigValueError) -> WebhookURL {
        guard let separator = text.range(of: "://") else {
            throw ConfigValueError("'\(text)' is not a URL (expected http://HOST/PATH or https://HOST/PATH)")
        }
        let scheme = text[..<separator.lowerBound].lowercased()
        guard scheme == "http" || scheme == "https" else {
            throw ConfigValueError("unsupported URL scheme '\(scheme)' (expected http or https)")
        }
        if text.unicodeScalars.contains(where: { $0 == " " || $0.value < 0x21 || $0.value == 0x7F }) {
            throw ConfigValueError("the URL contains a space or control character (expected a percent-encoded URL)")
        }
        if text.contains("#") { throw ConfigValueError("the URL has a fragment '#...' (expected none: fragments are never sent)") }
        let rest = text[separator.upperBound...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        var target = String(rest[authorityEnd...])
        if target.isEmpty { target = "/" } else if target.hasPrefix("?") { target = "/" + target }
        if authority.contains("@") {
            throw ConfigValueError("the URL contains credentials (expected none: use 'header Authorization ...' instead)")
        }
        guard !authority.isEmpty else { throw ConfigValueError("the URL has no host (expected http(s)://HOST/...)") }
        let hostPart: Substring
        var portPart: Substring?
        let kind: ListenAddress.HostKind
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw ConfigValueError("missing ']' after the IPv6 address in the URL") }
            hostPart = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw ConfigValueError("unexpected '\(after)' after the IPv6 address in the URL") }
                portPart = after.dropFirst()
            }
            guard ListenAddress.isIPv6(hostPart) else { throw ConfigValueError("'\(hostPart)' is not an IPv6 address") }
            kind = .ipv6
        } else {
            if let colon = authority.firstIndex(of: ":") {
                hostPart = authority[..<colon]
                portPart = authority[authority.index(after: colon)...]
            } else {
                hostPart = authority
            }
            kind = try ListenAddress.configHostKind(hostPart)
        }
        var port: UInt16 = scheme == "https" ? 443 : 80
        if let portPart {
            guard let value = ConfigValue.decimal(portPart), value >= 1, value <= 65535 else {
                throw ConfigValueError("'\(portPart)' is not a port (expected a number from 1 to 65535)")
            }
            port = UInt16(value)
        }
        return WebhookURL(scheme: scheme, host: String(hostPart), hostKind: kind, port: port, target: target, absoluteString: text)
    }
}
