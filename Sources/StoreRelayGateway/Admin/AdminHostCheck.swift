#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Which `Host` headers the admin page answers to: an IP address literal or `localhost`,
/// with or without a port. DNS rebinding needs a name the attacker controls that resolves to
/// this listener, and a browser sends that name as `Host`; no attacker can make a browser
/// send an IP literal for its own origin. A proxy in front must pass the upstream address as
/// `Host` (nginx's default) rather than its public name.
enum AdminHostCheck {
    /// Whether `host` (a `Host` header's value; nil when absent, as HTTP/1.0 allows) may
    /// reach the page.
    static func isAllowed(host header: String?) -> Bool {
        guard let header else { return true }
        let name = hostPart(of: header.trimmingSpaces)
        if name.lowercased() == "localhost" || name.lowercased() == "localhost." { return true }
        return isIPLiteral(name)
    }

    /// `name` from `name`, `name:port`, `[v6]` or `[v6]:port`.
    static func hostPart(of value: String) -> String {
        if value.hasPrefix("[") {
            guard let close = value.firstIndex(of: "]") else { return value }
            return String(value[value.index(after: value.startIndex)..<close])
        }
        if let colon = value.lastIndex(of: ":"), value[value.index(after: colon)...].allSatisfy(\.isASCIIDigit) {
            return String(value[..<colon])
        }
        return value
    }

    static func isIPLiteral(_ text: String) -> Bool {
        var v4 = in_addr(), v6 = in6_addr()
        return inet_pton(AF_INET, text, &v4) == 1 || inet_pton(AF_INET6, text, &v6) == 1
    }
}

private extension Character {
    var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
