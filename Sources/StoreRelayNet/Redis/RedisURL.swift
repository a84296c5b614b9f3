/// Where a Redis or Valkey server is: `redis://[user:password@]host:port[/db]`, or `rediss://`
/// for TLS (SPEC "Cluster mode"). The host follows `HostPort`'s rules (brackets around IPv6);
/// user and password are percent-decoded (RFC 3986 §2.1), so a password may hold any byte.
public struct RedisURL: Sendable, Hashable, CustomStringConvertible {
    public let usesTLS: Bool
    public let host: String
    public let hostKind: HostPort.HostKind
    public let port: UInt16
    /// ACL user; nil for the `default` user (`AUTH password` alone).
    public let user: String?
    public let password: String?
    /// The logical database to `SELECT` (0 by default).
    public let database: Int

    public static let defaultPort: UInt16 = 6379

    public init(usesTLS: Bool, host: String, hostKind: HostPort.HostKind, port: UInt16, user: String?, password: String?, database: Int) {
        self.usesTLS = usesTLS
        self.host = host
        self.hostKind = hostKind
        self.port = port
        self.user = user
        self.password = password
        self.database = database
    }

    /// The URL without its password, for logs and status pages.
    public var description: String {
        let credentials = user.map { "\($0):***@" } ?? (password == nil ? "" : ":***@")
        let name = hostKind == .ipv6 ? "[\(host)]" : host
        return "\(usesTLS ? "rediss" : "redis")://\(credentials)\(name):\(port)/\(database)"
    }

    /// True when the server is this machine's loopback, where a plaintext password crosses no
    /// network (the rule `HTTPURL.isLoopback` follows too).
    public var isLoopback: Bool { HostPort.isLoopback(host: host, kind: hostKind) }

    /// The same server with other credentials: the `cluster` block's `user` and `password`
    /// override the URL's (nil keeps the URL's).
    public func replacingCredentials(user: String?, password: String?) -> RedisURL {
        RedisURL(usesTLS: usesTLS, host: host, hostKind: hostKind, port: port, user: user ?? self.user,
                 password: password ?? self.password, database: database)
    }

    /// Parses `redis://[user:password@]host:port[/db]` (or `rediss://`). The credentials are
    /// everything before the last `@`, so a password may hold `/`, `:` or `@` unencoded, as
    /// redis-cli reads it; and no error message quotes anything before that `@`.
    public static func parse(_ text: String) throws(AddressError) -> RedisURL {
        let usage = "expected redis://[user:password@]host:port[/db] or rediss://..."
        let lower = text.lowercased()
        let usesTLS: Bool
        if lower.hasPrefix("redis://") { usesTLS = false } else if lower.hasPrefix("rediss://") { usesTLS = true } else {
            throw AddressError("'\(URLText.redacted(text))' is not a Redis URL (\(usage))")
        }
        var rest = Substring(text.dropFirst(usesTLS ? 9 : 8))
        var user: String?
        var password: String?
        if let at = rest.lastIndex(of: "@") {
            let userInfo = rest[..<at]
            rest = rest[rest.index(after: at)...]
            if let colon = userInfo.firstIndex(of: ":") {
                let name = try URLText.percentDecoded(userInfo[..<colon], in: "the Redis URL's credentials")
                user = name.isEmpty ? nil : name
                password = try URLText.percentDecoded(userInfo[userInfo.index(after: colon)...], in: "the Redis URL's credentials")
            } else if !userInfo.isEmpty {
                // `redis://secret@host` is the password alone (the default user), as redis-cli reads it.
                password = try URLText.percentDecoded(userInfo, in: "the Redis URL's credentials")
            }
        }
        var database = 0
        if let slash = rest.firstIndex(of: "/") {
            let path = rest[rest.index(after: slash)...]
            rest = rest[..<slash]
            if !path.isEmpty {
                guard path.utf8.count <= 5, path.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }), let number = Int(path) else {
                    throw AddressError("'\(path.prefix(20))' is not a database number (\(usage))")
                }
                database = number
            }
        }
        let hostPort = rest.contains(":") ? String(rest) : "\(rest):\(defaultPort)"
        let address = try HostPort.parse(hostPort)
        guard address.port > 0 else { throw AddressError("port 0 is not a Redis server's port (\(usage))") }
        return RedisURL(usesTLS: usesTLS, host: address.host, hostKind: address.kind, port: address.port,
                        user: user, password: password, database: database)
    }
}

/// A dump of a configuration (`dump`, a debugger) shows the URL's fields: never the password.
extension RedisURL: CustomReflectable {
    public var customMirror: Mirror {
        Mirror(self, children: [
            "usesTLS": usesTLS, "host": host, "port": port, "user": user as Any,
            "password": password == nil ? "<none>" : "<set>", "database": database,
        ], displayStyle: .struct)
    }
}
