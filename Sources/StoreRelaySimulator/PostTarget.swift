/// Where `storerelay simulate --url` posts: an `http://host[:port]/path` URL.
///
/// Plain HTTP only: the simulator talks to a gateway on a developer's machine or inside a
/// test network, where the gateway's listener (or the proxy in front of it) is plain HTTP.
public struct PostTarget: Sendable, Hashable {
    public let host: String
    public let port: UInt16
    /// The request target, starting with `/` (with the query, if any).
    public let path: String

    public init(url: String) throws(SimulatorError) {
        let lower = url.lowercased()
        if lower.hasPrefix("https://") {
            throw SimulatorError(.invalidOption, "--url must be an http:// URL: simulate does not speak TLS (post to the gateway's plain listener)")
        }
        guard lower.hasPrefix("http://") else {
            throw SimulatorError(.invalidOption, "--url must look like http://host:port/path, not '\(url.prefix(80))'")
        }
        let rest = url.dropFirst("http://".count)
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        var target = String(rest[authorityEnd...])
        if let fragment = target.firstIndex(of: "#") { target = String(target[..<fragment]) }
        if target.isEmpty || target.hasPrefix("?") { target = "/" + target }
        guard !authority.contains("@") else {
            throw SimulatorError(.invalidOption, "--url must not carry credentials")
        }

        var hostPart = Substring(authority)
        var portText: Substring?
        if hostPart.hasPrefix("[") {
            // An IPv6 literal, RFC 3986 §3.2.2: [::1]:8080
            guard let close = hostPart.firstIndex(of: "]") else {
                throw SimulatorError(.invalidOption, "--url has an unterminated IPv6 address")
            }
            let after = hostPart[hostPart.index(after: close)...]
            if after.hasPrefix(":") { portText = after.dropFirst() } else if !after.isEmpty {
                throw SimulatorError(.invalidOption, "--url has text after its IPv6 address")
            }
            hostPart = hostPart[hostPart.index(after: hostPart.startIndex)..<close]
        } else if let colon = hostPart.lastIndex(of: ":") {
            portText = hostPart[hostPart.index(after: colon)...]
            hostPart = hostPart[..<colon]
        }
        guard !hostPart.isEmpty, !hostPart.contains(where: { $0 == " " || $0 == "\r" || $0 == "\n" }) else {
            throw SimulatorError(.invalidOption, "--url has no host")
        }
        var port: UInt16 = 80
        if let portText {
            guard let parsed = UInt16(portText), parsed > 0 else {
                throw SimulatorError(.invalidOption, "--url has an invalid port '\(portText.prefix(10))'")
            }
            port = parsed
        }
        guard !target.contains(where: { $0 == " " || $0 == "\r" || $0 == "\n" }) else {
            throw SimulatorError(.invalidOption, "--url has spaces or line breaks in its path")
        }
        host = String(hostPart)
        self.port = port
        self.path = target
    }

    /// The `Host` header value (RFC 9112 §3.2): IPv6 literals in brackets, port when not 80.
    var hostHeader: String {
        let name = host.contains(":") ? "[\(host)]" : host
        return port == 80 ? name : "\(name):\(port)"
    }
}
