import StoreRelayDelivery
import StoreRelayNet
import StoreRelayCore

/// Redelivery (SPEC "Delivery controls") in cluster mode: an event still among the recent
/// ones on the server goes to one destination it was delivered to, again. Like a replay it
/// is one script: a fresh progress marked `redelivery` and a stream entry, written only
/// while the record and that destination's state are as read, so two operators (or two
/// instances) asking at once queue it once.
extension ClusterDelivery {
    static let redeliver = RedisScript(source: """
        -- Queues a delivered event to one destination again. KEYS[1] the record, KEYS[2] the
        -- event's state, KEYS[3] the destination's stream, KEYS[4] its progress hash.
        -- ARGV[1] the event id, ARGV[2] the prefix, ARGV[3] the destination, ARGV[4] the
        -- progress (fresh budget, marked redelivery), ARGV[5] the record as read, ARGV[6]
        -- the destination's state as read.
        if (redis.call('GET', KEYS[1]) or '') ~= ARGV[5] then
          return 'changed'
        end
        if (redis.call('HGET', KEYS[2], ARGV[3]) or '') ~= ARGV[6] then
          return 'changed'
        end
        if redis.call('HEXISTS', KEYS[4], ARGV[1]) == 1 then
          return 'delivering'
        end
        -- Out of the window of recent events until it finishes again, so it is not trimmed
        -- meanwhile; the delivery's end puts it back (`finish`).
        redis.call('ZREM', ARGV[2] .. 'recent', ARGV[1])
        redis.call('HINCRBY', KEYS[2], '_remaining', 1)
        redis.call('HSET', KEYS[4], ARGV[1], ARGV[4])
        redis.call('XADD', KEYS[3], '*', 'id', ARGV[1])
        return 'queued'
        """)

    struct RedeliverCall: ScriptCall {
        static var script: RedisScript { ClusterDelivery.redeliver }
        var record: String
        var state: String
        var stream: String
        var progressHash: String
        var eventId: String
        var prefix = ClusterKeys.prefix
        var destination: String
        var progress: [UInt8]
        var recordRead: [UInt8]
        var stateRead: [UInt8]

        var keys: [String] { [record, state, stream, progressHash] }
        var arguments: [[UInt8]] {
            typealias A = ScriptArgument
            return [A.text(eventId), A.text(prefix), A.text(destination), progress, recordRead, stateRead]
        }
    }

    public func redeliver(eventId id: String, destination name: String) async -> RedeliveryOutcome {
        guard topology.current.destinations[name] != nil else { return .unknownDestination }
        let replies = await client.replies([RESPCommand("GET", keys.event(id)), RESPCommand("HGET", keys.state(id), name)])
        guard replies.count == 2, case .success(let recordReply) = replies[0], case .success(let stateReply) = replies[1] else {
            return .failed("the cluster server did not answer; try again")
        }
        // What fails its cluster-key check is not the event's: it is not sent anywhere.
        guard let record = recordReply.bytes, case .intact(let bytes) = seal.open(record, .event, id),
              let notification = StoredNotification(decoding: bytes)
        else { return .unknownEvent }
        if case .quarantine(let reason) = notification.disposition { return .notDeliverable("quarantined: \(reason)") }
        guard notification.destinations.contains(name) else { return .notDeliverable("it was not routed to \(name)") }
        guard let state = stateReply.bytes, case .intact(let stateBytes) = seal.open(state, .state, id, name),
              let json = try? JSONValue.parse(stateBytes), let delivery = EventDeliveryState.Delivery(json: json)
        else { return .stillPending }  // no state yet: its first delivery has not ended
        switch delivery.phase {
        case .pending: return .stillPending
        case .deadLettered: return .deadLettered(letterId: delivery.deadLetterId)
        case .delivered: break
        }
        var progress = ClusterProgress(budgetStart: clock.now())
        progress.redelivery = true
        let call = RedeliverCall(record: keys.event(id), state: keys.state(id), stream: keys.queue(name), progressHash: keys.progress(name),
                                 eventId: id, destination: name, progress: seal.seal(progress.encoded, .progress, name, id),
                                 recordRead: record, stateRead: state)
        switch await client.script(call)?.string {
        case "queued"?:
            logger.info("event redelivered", [("event.id", id), ("destination", name)])
            nudge([name])
            return .queued
        case "delivering"?:
            return .stillPending
        case "changed"?:
            return .failed("the event changed while it was read (delivered or trimmed meanwhile); try again")
        default:
            return .failed("the cluster server did not queue it; try again")
        }
    }
}
