/// A Redis Cluster redirection (`-MOVED 3999 10.0.0.7:6381`, `-ASK 3999 10.0.0.7:6381`):
/// the node that serves a key's slot now (MOVED: for good; ASK: for this one command, while
/// the slot migrates there). <https://redis.io/docs/latest/operate/oss_and_stack/reference/cluster-spec/#redirection-and-resharding>
///
/// What a server sends is checked as if it came from anyone: a slot outside 0...16383, a
/// port outside 1...65535 or a host that is not an address or a host name is no redirect
/// (the reply then reaches the caller as the error it is).
public struct RedisRedirect: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable {
        /// The slot lives there now: re-discover, reconnect, send again.
        case moved = "MOVED"
        /// The slot is migrating and the key is (or will be) there: send `ASKING` and the
        /// command there, once.
        case ask = "ASK"
    }

    public let kind: Kind
    public let slot: Int
    /// The node's endpoint; nil when the server left it empty or unknown (`:6381`, `?:6381`):
    /// the same host the command went to, at `port`.
    public let host: HostPort?
    public let port: UInt16

    /// The redirection in `reply`, or nil when it is not a well-formed MOVED or ASK.
    public static func parse(_ reply: RESPValue) -> RedisRedirect? {
        guard case .error(let message) = reply else { return nil }
        let words = message.split(separator: " ", omittingEmptySubsequences: false)
        guard words.count == 3, let kind = Kind(rawValue: String(words[0])),
              words[1].utf8.count <= 5, words[1].utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }), let slot = Int(words[1]),
              slot < RedisHashSlot.count, let colon = words[2].lastIndex(of: ":")
        else { return nil }
        let endpoint = words[2][..<colon]
        let portText = words[2][words[2].index(after: colon)...]
        guard portText.utf8.count <= 5, portText.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }), let port = Int64(portText) else {
            return nil
        }
        if endpoint.isEmpty || endpoint == "?" {
            guard (1...65_535).contains(port) else { return nil }
            return RedisRedirect(kind: kind, slot: slot, host: nil, port: UInt16(port))
        }
        guard let address = HostPort.serverReply(host: endpoint, port: port) else { return nil }
        return RedisRedirect(kind: kind, slot: slot, host: address, port: address.port)
    }

    /// Where to send: the named endpoint, or `sender`'s host at the named port.
    public func target(sentTo sender: HostPort) -> HostPort {
        host ?? sender.with(port: port)
    }
}
