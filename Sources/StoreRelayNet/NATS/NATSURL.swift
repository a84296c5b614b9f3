/// Where a NATS server is: `nats://host[:port]` or `tls://host[:port]` (port 4222 unless
/// given). The scheme is the only TLS switch an operator writes: `tls://` insists on TLS (a
/// server that does not offer it is refused), `nats://` upgrades only when the server's INFO
/// says `tls_required`, as NATS's own clients do. Credentials go in the destination's `user`,
/// `password` and `token` options, never the URL, so the URL can be logged as written.
public struct NATSURL: Sendable, Hashable, CustomStringConvertible {
    public let requiresTLS: Bool
    public let host: String
    public let hostKind: HostPort.HostKind
    public let port: UInt16

    public static let defaultPort: UInt16 = 4222

    public init(requiresTLS: Bool, host: String, hostKind: HostPort.HostKind, port: UInt16) {
        self.requiresTLS = requiresTLS
        self.host = host
        self.hostKind = hostKind
        self.port = port
    }

    public var description: String {
        let name = hostKind == .ipv6 ? "[\(host)]" : host
        return "\(requiresTLS ? "tls" : "nats")://\(name):\(port)"
    }

    /// Parses `nats://host[:port]` or `tls://host[:port]`; a trailing `/` is allowed.
    public static func parse(_ text: String) throws(AddressError) -> NATSURL {
        let usage = "expected nats://host:port or tls://host:port"
        let lower = text.lowercased()
        let requiresTLS: Bool
        var rest: Substring
        if lower.hasPrefix("nats://") {
            requiresTLS = false
            rest = text.dropFirst(7)
        } else if lower.hasPrefix("tls://") {
            requiresTLS = true
            rest = text.dropFirst(6)
        } else {
            throw AddressError("'\(text.prefix(80))' is not a NATS URL (\(usage))")
        }
        if rest.contains("@") {
            throw AddressError("credentials in a NATS URL are not read (\(usage); give user and password, or token, in the block)")
        }
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        guard !rest.contains("/"), !rest.contains("?") else {
            throw AddressError("a NATS URL has no path or query (\(usage))")
        }
        let hostPort = rest.hasPrefix("[") ? (rest.contains("]:") ? String(rest) : "\(rest):\(defaultPort)")
            : (rest.contains(":") ? String(rest) : "\(rest):\(defaultPort)")
        let address = try HostPort.parse(hostPort)
        guard address.port > 0 else { throw AddressError("port 0 is not a NATS server's port (\(usage))") }
        return NATSURL(requiresTLS: requiresTLS, host: address.host, hostKind: address.kind, port: address.port)
    }
}
