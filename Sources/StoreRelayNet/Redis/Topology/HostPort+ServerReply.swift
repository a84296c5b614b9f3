extension HostPort {
    /// A node's address as a Redis server writes it in a reply (`CLUSTER SHARDS`, `MOVED`,
    /// `SENTINEL get-master-addr-by-name`): an IPv4 address, an IPv6 address *without*
    /// brackets, or a host name; nil for anything else, and for port 0 (a server's address
    /// comes from the network, so it is checked like configuration).
    static func serverReply(host: Substring, port: Int64) -> HostPort? {
        guard (1...65_535).contains(port) else { return nil }
        let kind: HostKind
        if host.contains(":") {
            guard isIPv6(host) else { return nil }
            kind = .ipv6
        } else if isIPv4(host) {
            kind = .ipv4
        } else if !host.utf8.allSatisfy({ $0 == UInt8(ascii: ".") || ($0 >= 48 && $0 <= 57) }), isHostname(host) {
            kind = .hostname
        } else {
            return nil
        }
        return HostPort(host: String(host), port: UInt16(port), kind: kind)
    }
}
