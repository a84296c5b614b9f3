extension RedisConfiguration {
    /// A command for asking "are you there?" that also keeps a watching connection on the
    /// right node: `PING` for one server or Sentinel (whose client follows the sentinels), but
    /// `EXISTS` of the slot key in a cluster. No key, no redirection: a `PING` would keep a
    /// watch on a node that lost the slot, or became a replica, for good.
    public var probe: RESPCommand {
        if case .cluster = topology { return RESPCommand("EXISTS", slotKey) }
        return RESPCommand("PING")
    }
}
