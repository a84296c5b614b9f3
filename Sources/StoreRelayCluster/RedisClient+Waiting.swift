import Dispatch
import StoreRelayNet
import StoreRelayCore

extension RedisClient {
    /// Sends `commands` as one pipeline and waits for the replies: for the admin listener,
    /// whose own serial queue may block (never a connection's queue, never the queue
    /// completions run on). The client's command timeout bounds the wait.
    func waitForReplies(_ commands: [RESPCommand]) -> [Result<RESPValue, RedisError>] {
        let replies = Locked<[Result<RESPValue, RedisError>]>([])
        let done = DispatchSemaphore(value: 0)
        send(commands) { results in
            replies.withLock { $0 = results }
            done.signal()
        }
        done.wait()
        return replies.current
    }

    /// One command, waited for: its reply, or nil when it failed or was an error reply.
    func waitForReply(_ command: RESPCommand) -> RESPValue? {
        guard case .success(let reply) = waitForReplies([command]).first, reply.errorKind == nil else { return nil }
        return reply
    }

    /// A script, waited for: its reply, or nil when it failed or was an error reply.
    func waitForScript(_ call: some ScriptCall) -> RESPValue? {
        let reply = Locked<RESPValue?>(nil)
        let done = DispatchSemaphore(value: 0)
        evaluate(call) { result in
            if case .success(let value) = result, value.errorKind == nil { reply.withLock { $0 = value } }
            done.signal()
        }
        done.wait()
        return reply.current
    }
}
