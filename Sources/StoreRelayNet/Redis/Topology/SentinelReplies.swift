/// What Sentinel and `ROLE` answer, read defensively (the replies come from the network).
/// <https://redis.io/docs/latest/operate/oss_and_stack/management/sentinel/#sentinel-api>
public enum SentinelReplies {
    /// `SENTINEL get-master-addr-by-name NAME`: `[ip, port]` of the primary the sentinel
    /// names now, or nil when it monitors no primary of that name (a null array). Anything
    /// else (an error reply, a bad address) is an error.
    public static func primaryAddress(_ reply: RESPValue) throws(TopologyReplyError) -> HostPort? {
        if case .array(nil) = reply { return nil }
        guard let parts = reply.elements, parts.count == 2, let host = parts[0].string, let port = parts[1].integer,
              let address = HostPort.serverReply(host: Substring(host), port: port)
        else { throw TopologyReplyError("SENTINEL get-master-addr-by-name", reply) }
        return address
    }

    /// The role `ROLE` reports: `master`, `slave` (a replica) or `sentinel`.
    public static func role(_ reply: RESPValue) throws(TopologyReplyError) -> String {
        guard let role = reply.elements?.first?.string, ["master", "slave", "sentinel"].contains(role) else {
            throw TopologyReplyError("ROLE", reply)
        }
        return role
    }
}
