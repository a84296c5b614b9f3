import FuzzSupport
import StoreRelayNet

/// libFuzzer target for what the client reads to find and follow its server (docs/SPEC.md
/// "Cluster mode", Topologies): arbitrary bytes as what a cluster node or a sentinel sends,
/// parsed as RESP2 replies, each given to every topology parser (`CLUSTER SHARDS` with and
/// without TLS, `CLUSTER SLOTS`, MOVED/ASK, `SENTINEL get-master-addr-by-name`, `ROLE`).
/// The input's first line is also read as an error reply (a MOVED or ASK without framing).
/// Checked: no crash or hang; every slot range within 0...16383 and ordered; every port in
/// 1...65535; every host one `HostPort.parse` accepts and formats back the same; a redirect
/// formatted again parses to the same redirect.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRedisTopology(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = fuzzInput(data, size)
    var parser = RESPParser(limits: RESPParser.Limits(maxReplyBytes: 1 << 20, maxReplyElements: 1 << 14, maxDepth: 8, maxLineBytes: 1 << 12))
    parser.feed(input)
    var replies: [RESPValue] = []
    while let reply = try? parser.next() { replies.append(reply) }
    let firstLine = input.prefix { $0 != 13 && $0 != 10 }
    replies.append(.error(String(decoding: firstLine, as: UTF8.self)))
    for reply in replies { check(reply) }
    return 0
}

private let askedAt = HostPort(host: "10.0.0.9", port: 7000, kind: .ipv4)

private func check(_ reply: RESPValue) {
    for map in [try? ClusterSlotMap.shards(reply, usesTLS: false), try? ClusterSlotMap.shards(reply, usesTLS: true),
                try? ClusterSlotMap.slots(reply)] {
        guard let map else { continue }
        for range in map.ranges {
            fuzzCheck(0 <= range.lower && range.lower <= range.upper && range.upper < RedisHashSlot.count, "slot range \(range)")
            fuzzCheck(range.port > 0, "port 0 in \(range)")
            if let host = range.host { checkAddress(host) }
            if let primary = map.primary(of: range.lower, askedAt: askedAt) { checkAddress(primary) }
        }
    }
    if let redirect = RedisRedirect.parse(reply) {
        fuzzCheck(redirect.slot >= 0 && redirect.slot < RedisHashSlot.count && redirect.port > 0, "redirect \(redirect)")
        let target = redirect.target(sentTo: askedAt)
        checkAddress(target)
        let again = RedisRedirect.parse(.error("\(redirect.kind.rawValue) \(redirect.slot) \(target.host):\(target.port)"))
        fuzzCheck(again?.slot == redirect.slot && again?.target(sentTo: askedAt) == target, "\(redirect) does not read back")
    }
    if let named = try? SentinelReplies.primaryAddress(reply) { checkAddress(named) }
    if let role = try? SentinelReplies.role(reply) {
        fuzzCheck(["master", "slave", "sentinel"].contains(role), "role \(role)")
    }
}

private func checkAddress(_ address: HostPort) {
    fuzzCheck(address.port > 0, "port 0: \(address)")
    fuzzCheck((try? HostPort.parse(address.description)) == address, "\(address) is not an address HostPort accepts")
}
