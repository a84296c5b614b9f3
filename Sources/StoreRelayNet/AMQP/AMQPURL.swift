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
            throw AddressError("'\(redacted(text))' is not an AMQP URL (\(usage))")
        }
        var rest = Substring(text.dropFirst(usesTLS ? 8 : 7))
        var user = "guest"
        var password = "guest"
        if let at = rest.lastIndex(of: "@") {
            let userInfo = rest[..<at]
            rest = rest[rest.index(after: at)...]
            let colon = userInfo.firstIndex(of: ":")
            let name = try percentDecoded(userInfo[..<(colon ?? userInfo.endIndex)], "user")
            if !name.isEmpty { user = name }
            password = try colon.map { c throws(AddressError) in try percentDecoded(userInfo[userInfo.index(after: c)...], "password") } ?? ""
        }
        var virtualHost = "/"
        if let slash = rest.firstIndex(of: "/") {
            let path = rest[rest.index(after: slash)...]
            rest = rest[..<slash]
            guard !path.contains("/"), !path.contains("?"), !path.contains("#") else {
                throw AddressError("'\(path.prefix(60))' is not one virtual host (write '/' inside it as %2f; \(usage))")
            }
            if !path.isEmpty { virtualHost = try percentDecoded(path, "virtual host") }
        }
        let defaultPort: UInt16 = usesTLS ? 5671 : 5672
        let hostPort = rest.hasSuffix("]") || !rest.contains(":") ? "\(rest):\(defaultPort)" : String(rest)
        let address = try HostPort.parse(hostPort)
        guard address.port > 0 else { throw AddressError("port 0 is not a broker's port (\(usage))") }
        return AMQPURL(usesTLS: usesTLS, host: address.host, hostKind: address.kind, port: address.port, user: user,
                       password: password, virtualHost: virtualHost)
    }

    private static func percentDecoded(_ text: Substring, _ what: String) throws(AddressError) -> String {
        var bytes: [UInt8] = []
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                throw AddressError("a '%' in the AMQP URL's \(what) is not followed by two hex digits")
            }
            bytes.append(high << 4 | low)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 48...57: byte - 48
        case 65...70: byte - 55
        case 97...102: byte - 87
        default: nil
        }
    }

    private static func redacted(_ text: String) -> String {
        guard let at = text.lastIndex(of: "@") else { return String(text.prefix(80)) }
        return "***" + String(text[at...].prefix(80))
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
