import Testing
@testable import StoreRelayCluster
import StoreRelayNet
import StoreRelayCore

/// The scripts' inputs and answers as typed values: each field lands at the `KEYS`/`ARGV`
/// position its script's header names, and each answer decodes, or fails to, as the script
/// can give it. (The scripts themselves run against a real server in the other suites.)
@Suite struct ScriptCallTests {
    let keys = ClusterKeys()

    func text(_ arguments: [[UInt8]]) -> [String] { arguments.map { String(decoding: $0, as: UTF8.self) } }

    func queue() throws -> ClusterQueue {
        // Never started: only its names are used.
        let client = RedisClient(configuration: RedisConfiguration(url: try RedisURL.parse("redis://127.0.0.1:1")))
        return ClusterQueue(client: client, keys: keys, destination: "crm", consumer: "relay-1")
    }

    @Test func finishPutsEachFieldWhereTheScriptReadsIt() throws {
        let queue = try queue()
        let entry = ClusterQueue.Entry(streamId: "1-0", eventId: "evt")
        let letter = ClusterQueue.Finish(state: Array("S".utf8), letter: ("dl-1", Array("J".utf8), Array("I".utf8)), replayed: "dl-0",
                                         now: 1234, recentEvents: 50, tampered: (Array("E".utf8), nil))
        let call = ClusterQueue.FinishCall(queue: queue, entry: entry, outcome: letter)
        #expect(call.keys == [keys.queue("crm"), keys.progress("crm"), keys.state("evt")])
        #expect(text(call.arguments) == [
            ClusterKeys.group, "1-0", "evt", "crm", "S", ClusterKeys.prefix, "1234", "50", "dl-1", "J", "I", "dl-0", "1", "E", "",
        ])
        // Delivered: no letter, so nothing is tampered, whatever the outcome carries.
        let delivered = ClusterQueue.Finish(state: Array("S".utf8), letter: nil, replayed: nil, now: 1, recentEvents: 2, tampered: (nil, nil))
        let plain = text(ClusterQueue.FinishCall(queue: queue, entry: entry, outcome: delivered).arguments)
        #expect(plain.count == 15 && plain[8...14] == ["", "", "", "", "", "", ""])
    }

    @Test func retryAndMoveDueToo() throws {
        let queue = try queue()
        let retry = ClusterQueue.RetryCall(queue: queue, entry: ClusterQueue.Entry(streamId: "2-0", eventId: "evt"), due: 99,
                                           progress: Array("P".utf8), state: Array("S".utf8))
        #expect(retry.keys == [keys.queue("crm"), keys.delayed("crm"), keys.progress("crm"), keys.state("evt")])
        #expect(text(retry.arguments) == [ClusterKeys.group, "2-0", "evt", "99", "P", "crm", "S"])
        let due = ClusterQueue.MoveDueCall(delayed: keys.delayed("crm"), stream: keys.queue("crm"), now: 5, limit: 100)
        #expect(due.keys == [keys.delayed("crm"), keys.queue("crm")] && text(due.arguments) == ["5", "100"])
    }

    @Test func replayListsItsDestinationsInPairs() {
        let call = ClusterDelivery.ReplayCall(
            record: keys.event("evt"), state: keys.state("evt"),
            destinations: [("crm", keys.queue("crm"), keys.progress("crm"), Array("p1".utf8)),
                           ("billing", keys.queue("billing"), keys.progress("billing"), Array("p2".utf8))],
            sealedRecord: Array("R".utf8), eventId: "evt", letterId: "dl-1", letterRead: Array("L".utf8), recordRead: nil, markerSeconds: 600)
        #expect(call.keys == [keys.event("evt"), keys.state("evt"), keys.queue("crm"), keys.progress("crm"),
                              keys.queue("billing"), keys.progress("billing")])
        #expect(text(call.arguments) == ["R", "evt", ClusterKeys.prefix, "dl-1", "L", "", "600", "crm", "p1", "billing", "p2"])
        #expect(ClusterDelivery.ReplayCall.Verdict(reply: .bulkString(Array("delivering".utf8))) == .delivering)
        #expect(ClusterDelivery.ReplayCall.Verdict(reply: .bulkString(Array("other".utf8))) == nil)
        #expect(ClusterDelivery.ReplayCall.Verdict(reply: .error("ERR no")) == nil)
        #expect(ClusterDelivery.ReplayCall.Verdict(reply: nil) == nil)
    }

    @Test func acknowledgementListsItsStreamsAfterTheEventsKeys() {
        let call = ClusterAcknowledgement.AcknowledgeCall(
            keys: keys, eventId: "evt", streams: [keys.queue("crm"), keys.queue("billing")], sealedRecord: Array("R".utf8),
            dedupeWindowSeconds: 600, now: 1234, recentEvents: 50, subscription: "tx-1", letter: nil)
        #expect(call.keys == [keys.seen("evt"), keys.event("evt"), keys.state("evt"), keys.queue("crm"), keys.queue("billing")])
        #expect(text(call.arguments) == ["600", "R", "evt", ClusterKeys.prefix, "1234", "50", "tx-1", "", "", ""])
        // A dead letter instead: no streams, and the letter in the last three places.
        let letter = ClusterAcknowledgement.AcknowledgeCall(
            keys: keys, eventId: "evt", streams: [], sealedRecord: Array("R".utf8), dedupeWindowSeconds: 1, now: 2, recentEvents: 3,
            subscription: nil, letter: ("dl-1", Array("J".utf8), Array("I".utf8)))
        #expect(letter.keys == [keys.seen("evt"), keys.event("evt"), keys.state("evt")])
        #expect(text(letter.arguments) == ["1", "R", "evt", ClusterKeys.prefix, "2", "3", "", "dl-1", "J", "I"])
    }

    @Test func answersDecodeAsTheScriptsGiveThem() {
        #expect(InstanceClaim.ClaimReply(.array([.integer(1)])) == .ours)
        #expect(InstanceClaim.ClaimReply(.array([.integer(0), .integer(1200), .bulkString(Array("host/1/ab".utf8))]))
            == .heldElsewhere(remaining: 1200, holder: "host/1/ab"))
        #expect(InstanceClaim.ClaimReply(.array([.integer(0)])) == .heldElsewhere(remaining: -1, holder: "?"))
        #expect(InstanceClaim.ClaimReply(.error("NOPERM no EVAL")) == nil)
        #expect(InstanceClaim.ClaimReply(nil) == nil)

        let epoch = ClusterEpoch.CheckCall.Reply(.array([.bulkString(Array("e1".utf8)), .integer(1), .integer(7)]))
        #expect(epoch?.epoch == "e1" && epoch?.created == true && epoch?.counter == 7)
        #expect(ClusterEpoch.CheckCall.Reply(.array([.bulkString(Array("e1".utf8)), .integer(0)])) == nil)
        #expect(ClusterEpoch.CheckCall.Reply(.error("ERR")) == nil)

        #expect(ClusterDeadLetters.SetAside(reply: .bulkString(Array("kept".utf8))) == .kept)
        #expect(ClusterDeadLetters.SetAside(reply: .bulkString(Array("changed".utf8))) == .changed)
        #expect(ClusterDeadLetters.SetAside(reply: nil) == .failed)

        #expect(ClusterAcknowledgement.AcknowledgeCall.Reply(.bulkString(Array("stored".utf8))) == .stored)
        #expect(ClusterAcknowledgement.AcknowledgeCall.Reply(.simpleString("duplicate")) == .duplicate)
        #expect(ClusterAcknowledgement.AcknowledgeCall.Reply(.bulkString(Array("kept".utf8))) == nil)
        #expect(ClusterAcknowledgement.AcknowledgeCall.Reply(.error("ERR duplicate")) == nil)
    }
}
