#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A `HOST:PORT` as configuration writes it: an IPv4 address, a bracketed IPv6 address or a
/// host name, and a port. The one parser of `host:port` in StoreRelay: routes.conf's `listen`
/// and `admin`, the servers' listen addresses, and (through `hostKind`) webhook URLs' hosts.
public struct HostPort: Sendable, Hashable, CustomStringConvertible {
    /// How the host was written, which decides how it is resolved.
    public enum HostKind: Sendable, Hashable {
        case ipv4, ipv6, hostname
    }

    /// The host without brackets: `0.0.0.0`, `::1`, `localhost`.
    public let host: String
    /// The TCP port; 0 asks the system for a free one when listening.
    public let port: UInt16
    public let kind: HostKind

    public init(host: String, port: UInt16, kind: HostKind) {
        self.host = host
        self.port = port
        self.kind = kind
    }

    /// `host:port`, with brackets around an IPv6 host.
    public var description: String { Self.format(host: host, kind: kind, port: Int(port)) }

    /// The same host with another port (the one a listener on port 0 was given).
    public func with(port: UInt16) -> HostPort { HostPort(host: host, port: port, kind: kind) }

    /// True when the host is this machine's loopback (127.0.0.0/8, ::1, `localhost`).
    public var isLoopback: Bool { Self.isLoopback(host: host, kind: kind) }

    /// Whether `host` names this machine's loopback: the only place plaintext carries
    /// credentials (a bearer token, a Redis password) without crossing a network. The one
    /// rule behind every "plaintext to another machine" warning (HTTP and Redis URLs alike).
    public static func isLoopback(host: String, kind: HostKind) -> Bool {
        switch kind {
        case .ipv4: host.hasPrefix("127.")
        case .ipv6: host == "::1" || host == "0:0:0:0:0:0:0:1"
        case .hostname: ["localhost", "localhost."].contains(host.lowercased())
        }
    }

    static func format(host: String, kind: HostKind, port: Int) -> String {
        kind == .ipv6 ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// Parses `0.0.0.0:8080`, `[::1]:9090` or `localhost:8080`.
    public static func parse(_ text: String) throws(AddressError) -> HostPort {
        let usage = "expected HOST:PORT such as 0.0.0.0:8080, [::1]:8080 or localhost:8080"
        let hostPart: Substring
        let portPart: Substring
        let bracketed = text.hasPrefix("[")
        if bracketed {
            guard let close = text.firstIndex(of: "]") else {
                throw AddressError("missing ']' after the IPv6 address in '\(text)' (\(usage))")
            }
            hostPart = text[text.index(after: text.startIndex)..<close]
            let after = text[text.index(after: close)...]
            guard after.hasPrefix(":") else { throw AddressError("missing ':PORT' in '\(text)' (\(usage))") }
            portPart = after.dropFirst()
            guard isIPv6(hostPart) else { throw AddressError("'\(hostPart)' is not an IPv6 address (\(usage))") }
        } else {
            guard let colon = text.lastIndex(of: ":") else { throw AddressError("missing ':PORT' in '\(text)' (\(usage))") }
            hostPart = text[..<colon]
            portPart = text[text.index(after: colon)...]
            if hostPart.contains(":") {
                throw AddressError("an IPv6 address needs brackets, as in [::1]:8080 (\(usage))")
            }
        }
        guard let port = parsePort(portPart) else {
            throw AddressError("'\(portPart)' is not a port (expected a number from 0 to 65535)")
        }
        let kind = bracketed ? HostKind.ipv6 : try hostKind(hostPart)
        return HostPort(host: String(hostPart), port: port, kind: kind)
    }

    /// Classifies and validates a host written without brackets.
    public static func hostKind(_ host: Substring) throws(AddressError) -> HostKind {
        guard !host.isEmpty else { throw AddressError("missing host (expected an IP address or a host name)") }
        if host.utf8.allSatisfy({ $0 == UInt8(ascii: ".") || isDigit($0) }) {
            guard isIPv4(host) else {
                throw AddressError("'\(host)' is not an IPv4 address (expected four numbers from 0 to 255)")
            }
            return .ipv4
        }
        guard isHostname(host) else {
            throw AddressError("'\(host)' is not a valid host name (expected letters, digits, '-' and '.')")
        }
        return .hostname
    }

    /// Four dot-separated decimal numbers of at most three digits, each at most 255.
    public static func isIPv4(_ text: Substring) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { part in
            (1...3).contains(part.utf8.count) && part.utf8.allSatisfy(isDigit) && Int(part)! <= 255
        }
    }

    /// What `inet_pton` takes as IPv6, without a zone (`%eth0`), which routes.conf never needs.
    public static func isIPv6(_ text: Substring) -> Bool {
        guard !text.isEmpty, text.utf8.count <= 45, !text.contains("%") else { return false }
        var storage = in6_addr()
        return String(text).withCString { inet_pton(AF_INET6, $0, &storage) } == 1
    }

    /// RFC 1123 host names: dot-separated labels of 1-63 letters, digits and inner hyphens.
    public static func isHostname(_ text: Substring) -> Bool {
        guard text.utf8.count <= 253 else { return false }
        let labels = text.split(separator: ".", omittingEmptySubsequences: false)
        return labels.allSatisfy { label in
            !label.isEmpty && label.utf8.count <= 63 && !label.hasPrefix("-") && !label.hasSuffix("-")
                && label.utf8.allSatisfy { isDigit($0) || isLetter($0) || $0 == UInt8(ascii: "-") }
        }
    }

    /// 1-5 ASCII digits, at most 65535 (no sign, no spaces).
    static func parsePort(_ text: Substring) -> UInt16? {
        guard (1...5).contains(text.utf8.count), text.utf8.allSatisfy(isDigit), let value = Int(text), value <= 65535 else {
            return nil
        }
        return UInt16(value)
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
    private static func isLetter(_ byte: UInt8) -> Bool {
        (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z")
    }
}

/// Why a `host:port`, a host or a URL is malformed, as one sentence for an operator.
public struct AddressError: Error, Sendable, Hashable, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
