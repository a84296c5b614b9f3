import StoreRelayNet

/// The inputs of the queue's scripts, field by field in the order each script's header
/// lists them.
extension ClusterQueue {
    /// `finish`: one delivery ended, delivered or dead-lettered.
    struct FinishCall: ScriptCall {
        static var script: RedisScript { ClusterQueue.finish }

        var stream: String
        var progress: String
        /// The event's state hash.
        var state: String
        var group = ClusterKeys.group
        var entry: Entry
        var destination: String
        var prefix = ClusterKeys.prefix
        var outcome: Finish

        init(queue: ClusterQueue, entry: Entry, outcome: Finish) {
            stream = queue.keys.queue(queue.destination)
            progress = queue.keys.progress(queue.destination)
            state = queue.keys.state(entry.eventId)
            self.entry = entry
            destination = queue.destination
            self.outcome = outcome
        }

        var keys: [String] { [stream, progress, state] }

        var arguments: [[UInt8]] {
            typealias A = ScriptArgument
            let letter = outcome.letter
            return [
                A.text(group), A.text(entry.streamId), A.text(entry.eventId), A.text(destination), outcome.state,
                A.text(prefix), A.number(outcome.now), A.number(outcome.recentEvents),
                A.text(letter?.id), letter?.json ?? [], letter?.entry ?? [],
                A.text(outcome.replayed),
                // Only a letter can be a tampered one: without one nothing is set aside.
                A.flag(outcome.tampered != nil && letter != nil), outcome.tampered?.event ?? [], outcome.tampered?.progress ?? [],
            ]
        }
    }

    /// `retry`: one entry out of the stream, into the delayed set until `due`.
    struct RetryCall: ScriptCall {
        static var script: RedisScript { ClusterQueue.retry }

        var stream: String
        var delayed: String
        var progressHash: String
        /// The event's state hash.
        var stateHash: String
        var group = ClusterKeys.group
        var entry: Entry
        /// UNIX milliseconds.
        var due: Int64
        /// The attempts so far.
        var progress: [UInt8]
        var destination: String
        /// The destination's state of the event.
        var state: [UInt8]

        init(queue: ClusterQueue, entry: Entry, due: Int64, progress: [UInt8], state: [UInt8]) {
            stream = queue.keys.queue(queue.destination)
            delayed = queue.keys.delayed(queue.destination)
            progressHash = queue.keys.progress(queue.destination)
            stateHash = queue.keys.state(entry.eventId)
            self.entry = entry
            self.due = due
            self.progress = progress
            destination = queue.destination
            self.state = state
        }

        var keys: [String] { [stream, delayed, progressHash, stateHash] }

        var arguments: [[UInt8]] {
            typealias A = ScriptArgument
            return [A.text(group), A.text(entry.streamId), A.text(entry.eventId), A.number(due), progress, A.text(destination), state]
        }
    }

    /// `readInTurn`: new entries, each given its subscription's turn or held behind it.
    struct ReadInTurnCall: ScriptCall {
        static var script: RedisScript { ClusterQueue.readInTurn }

        var stream: String
        var turns: String
        var group = ClusterKeys.group
        var consumer: String
        var count: Int
        var prefix = ClusterKeys.prefix
        var destination: String

        init(queue: ClusterQueue, count: Int) {
            stream = queue.keys.queue(queue.destination)
            turns = queue.keys.turns(queue.destination)
            consumer = queue.consumer
            self.count = count
            destination = queue.destination
        }

        var keys: [String] { [stream, turns] }
        var arguments: [[UInt8]] {
            typealias A = ScriptArgument
            return [A.text(group), A.text(consumer), A.number(count), A.text(prefix), A.text(destination)]
        }
    }

    /// `moveDue`: retries due by `now` back into the stream, at most `limit`.
    struct MoveDueCall: ScriptCall {
        static var script: RedisScript { ClusterQueue.moveDue }

        var delayed: String
        var stream: String
        /// UNIX milliseconds.
        var now: Int64
        var limit: Int

        var keys: [String] { [delayed, stream] }
        var arguments: [[UInt8]] { [ScriptArgument.number(now), ScriptArgument.number(limit)] }
    }

    /// `removeDeadConsumers`: the group's consumers of instances gone, this one excepted.
    struct RemoveDeadConsumersCall: ScriptCall {
        static var script: RedisScript { ClusterQueue.removeDeadConsumers }

        var stream: String
        var group = ClusterKeys.group
        /// What every instance's claim key starts with (`claim:` under the prefix).
        var claimPrefix: String
        var consumer: String

        var keys: [String] { [stream] }
        var arguments: [[UInt8]] { [ScriptArgument.text(group), ScriptArgument.text(claimPrefix), ScriptArgument.text(consumer)] }
    }
}
