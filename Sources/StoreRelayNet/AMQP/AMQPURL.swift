/// Where an AMQP 0-9-1 broker is: `amqp://[user:password@]host[:port][/vhost]`, or `amqps://`
/// for TLS (RabbitMQ's URI spec, https://www.rabbitmq.com/docs/uri-spec). User, password and
/// virtual host are percent-decoded, so `/%2f` is the default vhost `/` and a password may hold
/// any byte. An absent path means vhost `/` as well; an empty user means RabbitMQ's `guest`.
public struct AMQPURL: Sendable, Hashable, CustomStringConvertible {
    public let usesTLS: Bool
    public let host: String
    public let hostKind: HostPort.HostKind
    public let port: UInt16
    public let user: String
    public let password: String
    public let virtualHost: String

    public init(usesTLS: Bool, host: String, hostKind: HostPort.HostKind, port: UInt16, user: String, password: String,
                virtualHost: String) {
        self.usesTLS = usesTLS
        self.host = host
        self.hostKind = hostKind
        self.port = port
        self.user = user
        self.password = password
        self.virtualHost = virtualHost
    }

    /// The URL without its password, for logs, status pages and `check`.
    public var description: String {
        let name = hostKind == .ipv6 ? "[\(host)]" : host
        let vhost = virtualHost.split(separator: "/", omittingEmptySubsequences: false).joined(separator: "%2f")
        return "\(usesTLS ? "amqps" : "amqp")://\(user):***@\(name):\(port)/\(vhost)"
    }

    public var isLoopback: Bool { HostPort.isLoopback(host: host, kind: hostKind) }

    static let usage = "expected amqp://user:password@host:port/vhost or amqps://..."

    /// Parses the URL. The credentials are everything before the last `@`; no error message
    /// quotes anything before it.
    public static func parse(_ text: String) throws(AddressError) -> AMQPURL {
        let lower = text.lowercased()
        let usesTLS: Bool
        if lower.hasPrefix("amqp://") { usesTLS = false } else if lower.hasPrefix("amqps://") { usesTLS = true } else {
            throw AddressError("'\(URLText.redacted(text))' is not an AMQP URL (\(usage))")
        }
        var rest = Substring(text.dropFirst(usesTLS ? 8 : 7))
        var user = "guest"
        var password = "guest"
        if let at = rest.lastIndex(of: "@") {
            let userInfo = rest[..<at]
            rest = rest[rest.index(after: at)...]
            let colon = userInfo.firstIndex(of: ":")
            let name = try URLText.percentDecoded(userInfo[..<(colon ?? userInfo.endIndex)], in: "the AMQP URL's user")
            if !name.isEmpty { user = name }
            password = try colon.map { c throws(AddressError) in try URLText.percentDecoded(userInfo[userInfo.index(after: c)...], in: "the AMQP URL's password") } ?? ""
        }
        var virtualHost = "/"
        if let slash = rest.firstIndex(of: "/") {
            let path = rest[rest.index(after: slash)...]
            rest = rest[..<slash]
            guard !path.contains("/"), !path.contains("?"), !path.contains("#") else {
                throw AddressError("'\(path.prefix(60))' is not one virtual host (write '/' inside it as %2f; \(usage))")
            }
            if !path.isEmpty { virtualHost = try URLText.percentDecoded(path, in: "the AMQP URL's virtual host") }
        }
        let defaultPort: UInt16 = usesTLS ? 5671 : 5672
        let hostPort = rest.hasSuffix("]") || !rest.contains(":") ? "\(rest):\(defaultPort)" : String(rest)
        let address = try HostPort.parse(hostPort)
        guard address.port > 0 else { throw AddressError("port 0 is not a broker's port (\(usage))") }
        return AMQPURL(usesTLS: usesTLS, host: address.host, hostKind: address.kind, port: address.port, user: user,
                       password: password, virtualHost: virtualHost)
    }
}

/// A dump of a configuration shows the URL's fields: never the password.
extension AMQPURL: CustomReflectable {
    public var customMirror: Mirror {
        Mirror(self, children: [
            "usesTLS": usesTLS, "host": host, "port": port, "user": user, "password": "<set>", "virtualHost": virtualHost,
        ], displayStyle: .struct)
    }
}
