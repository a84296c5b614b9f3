import StoreRelayNet
import StoreRelayCore

/// `async` edges over the client's callbacks, for what answers an operator (the admin
/// listener's reads, deletes and replays): a request waiting for the server suspends
/// instead of holding a thread, so one that hangs on a stalled server leaves the others
/// answering. The client's command timeout bounds each wait.
extension RedisClient {
    /// Sends `commands` as one pipeline; their replies, in order.
    func replies(_ commands: [RESPCommand]) async -> [Result<RESPValue, RedisError>] {
        await withCheckedContinuation { continuation in
            send(commands) { continuation.resume(returning: $0) }
        }
    }

    /// One command: its reply, or nil when it failed or was an error reply.
    func reply(_ command: RESPCommand) async -> RESPValue? {
        guard case .success(let reply) = await replies([command]).first, reply.errorKind == nil else { return nil }
        return reply
    }

    /// A script: its reply, or nil when it failed or was an error reply.
    func script(_ call: some ScriptCall) async -> RESPValue? {
        await withCheckedContinuation { continuation in
            evaluate(call) { result in
                guard case .success(let value) = result, value.errorKind == nil else { return continuation.resume(returning: nil) }
                continuation.resume(returning: value)
            }
        }
    }
}
