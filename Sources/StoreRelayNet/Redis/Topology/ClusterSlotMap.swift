/// Which primary serves which slots, as a cluster node answers `CLUSTER SHARDS` (Redis 7.0+,
/// Valkey) or `CLUSTER SLOTS` (every version; deprecated in 7.0 but still answered). Pure:
/// replies in, addresses out; `RedisLocator` does the asking.
///
/// Both replies come from the network and are read defensively: a range outside
/// 0...16383, a port outside 1...65535, a host that is not an address or a host name, or an
/// element of the wrong type makes that range (or node) unusable, never a trap. Only a reply
/// that is not an array at all is an error: a cluster that does not serve the wanted slot is
/// `primary(of:)`'s nil.
public struct ClusterSlotMap: Sendable, Hashable {
    /// Slots `lower...upper` and the primary serving them.
    public struct Range: Sendable, Hashable {
        public let lower: Int
        public let upper: Int
        /// The primary's endpoint (nil: the same host the question went to) and port.
        public let host: HostPort?
        public let port: UInt16
    }

    public private(set) var ranges: [Range] = []

    public init(ranges: [Range]) {
        self.ranges = ranges
    }

    /// The primary serving `slot`: its endpoint, or `askedAt`'s host at its port when the
    /// cluster left the endpoint unknown (`NULL`, `""` or `?`: clients are to use the address
    /// they asked).
    public func primary(of slot: Int, askedAt: HostPort) -> HostPort? {
        guard let range = ranges.first(where: { ($0.lower...$0.upper).contains(slot) }) else { return nil }
        return range.host ?? askedAt.with(port: range.port)
    }

    /// `CLUSTER SHARDS`: an array of shards, each a map (a flat key/value array in RESP2) of
    /// `slots` (start, end, start, end...) and `nodes` (maps of `endpoint`, `ip`, `port`,
    /// `tls-port`, `role`, `health`...). The primary is the node with role `master` that is
    /// not `failed`; over TLS its `tls-port`.
    public static func shards(_ reply: RESPValue, usesTLS: Bool) throws(TopologyReplyError) -> ClusterSlotMap {
        guard let shards = reply.elements else { throw TopologyReplyError("CLUSTER SHARDS", reply) }
        var map = ClusterSlotMap(ranges: [])
        for shard in shards {
            guard let shardFields = Self.resp2Map(shard), let slots = shardFields["slots"]?.elements,
                  let nodes = shardFields["nodes"]?.elements
            else {
                continue
            }
            let primaries = nodes.compactMap(Self.resp2Map).filter { $0["role"]?.string == "master" && $0["health"]?.string != "failed" }
            guard let primary = primaries.first,
                  let port = (usesTLS ? primary["tls-port"] ?? primary["port"] : primary["port"])?.integer,
                  let endpoint = endpoint(primary["endpoint"] ?? primary["ip"], port: port)
            else { continue }
            var index = 0
            while index + 1 < slots.count {
                if let lower = slots[index].integer, let upper = slots[index + 1].integer {
                    map.add(lower, upper, endpoint)
                }
                index += 2
            }
        }
        return map
    }

    /// `CLUSTER SLOTS`: an array of `[start, end, primary, replica...]`, each node
    /// `[endpoint, port, id, metadata]` (Redis 7 adds the metadata map).
    public static func slots(_ reply: RESPValue) throws(TopologyReplyError) -> ClusterSlotMap {
        guard let entries = reply.elements else { throw TopologyReplyError("CLUSTER SLOTS", reply) }
        var map = ClusterSlotMap(ranges: [])
        for entry in entries {
            guard let parts = entry.elements, parts.count >= 3, let lower = parts[0].integer, let upper = parts[1].integer,
                  let node = parts[2].elements, node.count >= 2, let port = node[1].integer,
                  let endpoint = endpoint(node[0], port: port)
            else { continue }
            map.add(lower, upper, endpoint)
        }
        return map
    }

    /// A valid endpoint: nil host for `NULL`, `""` and `?`; nil overall when unusable.
    private static func endpoint(_ value: RESPValue?, port: Int64) -> (host: HostPort?, port: UInt16)? {
        guard (1...65_535).contains(port) else { return nil }
        let text = value?.string ?? ""
        if text.isEmpty || text == "?" { return (nil, UInt16(port)) }
        guard let address = HostPort.serverReply(host: Substring(text), port: port) else { return nil }
        return (address, address.port)
    }

    private mutating func add(_ lower: Int64, _ upper: Int64, _ endpoint: (host: HostPort?, port: UInt16)) {
        guard 0 <= lower, lower <= upper, upper < Int64(RedisHashSlot.count) else { return }
        ranges.append(Range(lower: Int(lower), upper: Int(upper), host: endpoint.host, port: endpoint.port))
    }

    /// A RESP2 map (a flat array of names and values); the first value of a repeated name
    /// wins; nil when not an array of an even count or when a name is not a string.
    static func resp2Map(_ value: RESPValue) -> [String: RESPValue]? {
        guard let elements = value.elements, elements.count % 2 == 0 else { return nil }
        var fields: [String: RESPValue] = [:]
        var index = 0
        while index < elements.count {
            guard let name = elements[index].string else { return nil }
            if fields[name] == nil { fields[name] = elements[index + 1] }
            index += 2
        }
        return fields
    }
}

/// A topology reply (`CLUSTER SHARDS`, `SENTINEL ...`, `ROLE`) that is not what the command
/// answers; the sentence quotes at most 200 bytes of it.
public struct TopologyReplyError: Error, Sendable, Hashable, CustomStringConvertible {
    public let description: String

    init(_ command: String, _ reply: RESPValue) {
        description = "\(command) answered \(String(reply.description.prefix(200)))"
    }
}
