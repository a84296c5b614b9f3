import StoreRelayNet

extension ClusterAcknowledgement {
    /// `script`'s input: one notification stored and enqueued on its destinations' streams,
    /// or kept as a dead letter; fields in the order the script's header lists them.
    struct AcknowledgeCall: ScriptCall {
        static var script: RedisScript { ClusterAcknowledgement.script }

        /// The id's dedupe marker.
        var seen: String
        /// The event's record.
        var record: String
        /// The event's state hash.
        var state: String
        /// Each routed destination's stream; none when the event becomes a dead letter.
        var streams: [String]
        var dedupeWindowSeconds: Int64
        /// The record as stored (sealed when `cluster-key` is set).
        var sealedRecord: [UInt8]
        var eventId: String
        var prefix = ClusterKeys.prefix
        /// UNIX milliseconds.
        var now: Int64
        /// How many events the recent-events list keeps.
        var recentEvents: Int
        /// The original transaction id, under which the event is listed (nil: none).
        var subscription: String?
        /// The dead letter kept instead of deliveries: its id, its (sealed) JSON and its index entry.
        var letter: (id: String, json: [UInt8], entry: [UInt8])?

        init(keys: ClusterKeys, eventId: String, streams: [String], sealedRecord: [UInt8], dedupeWindowSeconds: Int64, now: Int64,
             recentEvents: Int, subscription: String?, letter: (id: String, json: [UInt8], entry: [UInt8])?) {
            seen = keys.seen(eventId)
            record = keys.event(eventId)
            state = keys.state(eventId)
            self.streams = streams
            self.dedupeWindowSeconds = dedupeWindowSeconds
            self.sealedRecord = sealedRecord
            self.eventId = eventId
            self.now = now
            self.recentEvents = recentEvents
            self.subscription = subscription
            self.letter = letter
        }

        var keys: [String] { [seen, record, state] + streams }

        var arguments: [[UInt8]] {
            typealias A = ScriptArgument
            return [
                A.number(dedupeWindowSeconds), sealedRecord, A.text(eventId), A.text(prefix), A.number(now), A.number(recentEvents),
                A.text(subscription), A.text(letter?.id), letter?.json ?? [], letter?.entry ?? [],
            ]
        }

        /// What the script answers when it ran.
        enum Reply: Equatable {
            /// Written now: the record, and its stream entries or its dead letter.
            case stored
            /// The id was seen within the dedupe window: nothing written.
            case duplicate

            /// nil for anything else (an error reply among them).
            init?(_ reply: RESPValue) {
                switch reply.string {
                case "stored": self = .stored
                case "duplicate": self = .duplicate
                default: return nil
                }
            }
        }
    }
}
