#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A `HOST:PORT` to listen on: an IPv4 address, a bracketed IPv6 address or a host name.
public struct ListenAddress: Sendable, Hashable, CustomStringConvertible {
    /// How the host was written, which decides how the listener resolves it.
    public enum HostKind: Sendable, Hashable {
        case ipv4, ipv6, hostname
    }

    /// The host without brackets: `0.0.0.0`, `::1`, `localhost`.
    public let host: String
    /// The TCP port; 0 asks the system for a free one (tests).
    public let port: UInt16
    /// What kind of host `host` is.
    public let kind: HostKind

    public init(host: String, port: UInt16, kind: HostKind) {
        self.host = host
        self.port = port
        self.kind = kind
    }

    /// `host:port`, with brackets around an IPv6 host, as routes.conf writes it.
    public var description: String { kind == .ipv6 ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// Parses `0.0.0.0:8080`, `[::1]:9090` or `localhost:8080`.
    static func parse(_ text: String) throws(ConfigValueError) -> ListenAddress {
        let usage = "expected HOST:PORT such as 0.0.0.0:8080, [::1]:8080 or localhost:8080"
        let hostPart: Substring
        let portPart: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { throw ConfigValueError("missing ']' after the IPv6 address in '\(text)' (\(usage))") }
            hostPart = text[text.index(after: text.startIndex)..<close]
            let after = text[text.index(after: close)...]
            guard after.hasPrefix(":") else { throw ConfigValueError("missing ':PORT' in '\(text)' (\(usage))") }
            portPart = after.dropFirst()
            guard isIPv6(hostPart) else { throw ConfigValueError("'\(hostPart)' is not an IPv6 address (\(usage))") }
        } else {
            guard let colon = text.lastIndex(of: ":") else { throw ConfigValueError("missing ':PORT' in '\(text)' (\(usage))") }
            hostPart = text[..<colon]
            portPart = text[text.index(after: colon)...]
            if hostPart.contains(":") { throw ConfigValueError("an IPv6 address needs brackets, as in [::1]:8080 (\(usage))") }
        }
        guard let port = ConfigValue.decimal(portPart), port <= 65535 else {
            throw ConfigValueError("'\(portPart)' is not a port (expected a number from 0 to 65535)")
        }
        if text.hasPrefix("[") { return ListenAddress(host: String(hostPart), port: UInt16(port), kind: .ipv6) }
        let kind = try hostKind(hostPart)
        return ListenAddress(host: String(hostPart), port: UInt16(port), kind: kind)
    }

    /// Classifies and validates a host written without brackets.
    static func hostKind(_ host: Substring) throws(ConfigValueError) -> HostKind {
        guard !host.isEmpty else { throw ConfigValueError("missing host (expected an IP address or a host name)") }
        if host.allSatisfy({ $0 == "." || ("0"..."9").contains($0) }) {
            guard isIPv4(host) else { throw ConfigValueError("'\(host)' is not an IPv4 address (expected four numbers from 0 to 255)") }
            return .ipv4
        }
        guard isHostname(host) else {
            throw ConfigValueError("'\(host)' is not a valid host name (expected letters, digits, '-' and '.')")
        }
        return .hostname
    }

    static func isIPv4(_ text: Substring) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { part in
            part.count <= 3 && (ConfigValue.decimal(part).map { $0 <= 255 } ?? false)
        }
    }

    static func isIPv6(_ text: Substring) -> Bool {
        guard !text.isEmpty, text.count <= 45, !text.contains("%") else { return false }
        var storage = in6_addr()
        return String(text).withCString { inet_pton(AF_INET6, $0, &storage) } == 1
    }

    /// RFC 1123 host names: dot-separated labels of 1-63 letters, digits and inner hyphens.
    static func isHostname(_ text: Substring) -> Bool {
        guard text.utf8.count <= 253 else { return false }
        let labels = text.split(separator: ".", omittingEmptySubsequences: false)
        return labels.allSatisfy { label in
            !label.isEmpty && label.utf8.count <= 63 && !label.hasPrefix("-") && !label.hasSuffix("-")
                && label.unicodeScalars.allSatisfy { ConfigLexer.isASCIILetter($0) || ("0"..."9").contains($0) || $0 == "-" }
        }
    }
}
