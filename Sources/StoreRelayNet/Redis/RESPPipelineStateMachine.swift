import Dispatch
import StoreRelayCore

/// The rules of one Redis connection, without I/O: the greeting (HELLO with AUTH and SETNAME,
/// SELECT, the configured checks), then any number of pipelined commands whose replies come
/// in the order of the commands (RESP has no other framing of who asked what), the deadline
/// of the oldest unanswered one, and the end. `RedisConnection` feeds it the events of its
/// `OutboundConnection` and performs the actions it returns; tests feed it bytes directly.
///
/// `Waiter` is whatever stands for a caller waiting for one reply (a completion in
/// `RedisConnection`, a number in tests). Time comes in with each event that needs it.
struct RESPPipelineStateMachine<Waiter> {
    enum State: Equatable { case connecting, greeting, ready, closed }

    enum Action {
        /// Send these bytes; `deadline`, when given, is the timer's new deadline.
        case send([UInt8], deadline: DispatchTime?)
        case setDeadline(DispatchTime)
        /// The commands cannot be sent (not connected): fail each waiter with the error.
        case reject([Waiter], RedisError)
        /// `waiter`'s reply (an error reply is a reply).
        case deliver(Waiter, RESPValue)
        /// The greeting succeeded: the connection takes commands from now on.
        case ready(deadline: DispatchTime)
        /// Close the connection; every waiter still unanswered fails with the error (after
        /// the client learned of it, so whoever hears of a failed command sees it disconnected).
        case close(RedisError, unanswered: [Waiter])
    }

    private enum Asker {
        /// A greeting command: its reply is the machine's to judge.
        case greeting
        case waiter(Waiter)
    }

    /// A command sent and not yet answered.
    private struct Pending {
        var asker: Asker
        var deadline: DispatchTime
    }

    private(set) var state = State.connecting
    private let configuration: RedisConfiguration
    private var parser: RESPParser
    private var pending: [Pending] = []
    private var pendingHead = 0
    private var greetingReplies: [RESPValue] = []
    private var greetingCount = 0

    init(configuration: RedisConfiguration) {
        self.configuration = configuration
        parser = RESPParser(limits: configuration.replyLimits)
    }

    private var origin: String { configuration.url.description }

    /// Opening starts: resolution, connect, TLS and the greeting must all be done in time.
    mutating func open(now: DispatchTime) -> Action {
        .setDeadline(now.advanced(by: configuration.connectTimeout))
    }

    /// Connected (TLS established, for rediss): the greeting goes out, pipelined.
    mutating func established() -> Action? {
        guard state == .connecting else { return nil }
        state = .greeting
        let url = configuration.url
        var hello = ["2"]
        if url.user != nil || url.password != nil {
            hello += ["AUTH", url.user ?? "default", url.password ?? ""]
        }
        if let name = configuration.clientName { hello += ["SETNAME", name] }
        var commands = [RESPCommand("HELLO", hello)]
        if url.database != 0 { commands.append(RESPCommand("SELECT", String(url.database))) }
        commands += configuration.connectionChecks
        greetingCount = commands.count
        var bytes: [UInt8] = []
        for command in commands {
            command.encode(into: &bytes)
            pending.append(Pending(asker: .greeting, deadline: .distantFuture))
        }
        return .send(bytes, deadline: nil)
    }

    /// Commands to send, each with who waits for its reply; rejected unless ready.
    mutating func send(_ commands: [(RESPCommand, Waiter)], now: DispatchTime) -> Action {
        guard state == .ready else {
            return .reject(commands.map { $0.1 }, RedisError(.unavailable, "not connected to \(origin)"))
        }
        let wasEmpty = pendingHead == pending.count
        let deadline = now.advanced(by: configuration.commandTimeout)
        var bytes: [UInt8] = []
        for (command, waiter) in commands {
            command.encode(into: &bytes)
            pending.append(Pending(asker: .waiter(waiter), deadline: deadline))
        }
        return .send(bytes, deadline: wasEmpty && !commands.isEmpty ? deadline : nil)
    }

    /// Bytes arrived; `nextReply` hands out what they complete.
    mutating func received(_ bytes: some Sequence<UInt8>) {
        guard state == .greeting || state == .ready else { return }
        parser.feed(bytes)
    }

    /// What the next complete reply calls for; nil when more bytes are needed. Call until nil
    /// (or until the action closes the connection).
    mutating func nextReply() -> Action? {
        while state == .greeting || state == .ready {
            let reply: RESPValue
            do {
                guard let next = try parser.next() else { return nil }
                reply = next
            } catch where error.exceedsLimits {
                return close(RedisError(.replyTooLarge, "\(origin) sent a reply larger than this client accepts (\(error)); "
                    + "the connection was closed"))
            } catch {
                return close(RedisError(.protocolError, "\(origin) sent bytes that are not RESP2: \(error)"))
            }
            guard pendingHead < pending.count else {
                return close(RedisError(.protocolError, "\(origin) sent a reply nothing asked for"))
            }
            let asker = pending[pendingHead].asker
            pendingHead += 1
            if pendingHead == pending.count {
                pending.removeAll(keepingCapacity: true)
                pendingHead = 0
            }
            switch asker {
            case .waiter(let waiter): return .deliver(waiter, reply)
            case .greeting: if let action = greetingReply(reply) { return action }
            }
        }
        return nil
    }

    /// The timer fired: before ready, the connect timeout; then the oldest command's deadline.
    mutating func deadlinePassed(now: DispatchTime) -> Action? {
        switch state {
        case .closed:
            return nil
        case .ready:
            guard pendingHead < pending.count else { return .setDeadline(.distantFuture) }
            if now >= pending[pendingHead].deadline {
                return close(RedisError(.timeout, "\(origin) did not answer within \(configuration.commandTimeout)"))
            }
            return .setDeadline(pending[pendingHead].deadline)
        case .connecting, .greeting:
            return close(RedisError(.unavailable, "no connection to \(origin) within \(configuration.connectTimeout)"))
        }
    }

    /// The peer closed its side: nothing more will be answered.
    mutating func inputEnded() -> Action? {
        close(RedisError(.unavailable, "\(origin) closed the connection"))
    }

    /// The driver failed (and closed).
    mutating func failed(_ error: OutboundError) -> Action? {
        switch error.code {
        case .resolution, .connect, .tlsSetup:
            return close(RedisError(.unavailable, error.message))
        case .handshake, .io:
            if error.endOfStream { return inputEnded() }
            if error.whileSending { return close(RedisError(.unavailable, "connection to \(origin) broke while sending")) }
            return close(RedisError(.unavailable, "connection to \(origin) failed: \(error.reason)"))
        }
    }

    /// Ends the connection as if it had failed with `error`; nil when it already ended.
    mutating func close(_ error: RedisError) -> Action? {
        guard state != .closed else { return nil }
        state = .closed
        var unanswered: [Waiter] = []
        for entry in pending[pendingHead...] {
            if case .waiter(let waiter) = entry.asker { unanswered.append(waiter) }
        }
        pending = []
        pendingHead = 0
        return .close(error, unanswered: unanswered)
    }

    /// Judges one greeting reply; an action once the greeting is over, well or badly.
    private mutating func greetingReply(_ reply: RESPValue) -> Action? {
        let url = configuration.url
        let checks = configuration.connectionChecks.count
        let step = greetingReplies.count
        let isCheck = step >= greetingCount - checks
        // A check's error reply is an answer `acceptConnection` reads ("unknown command" is
        // how a server says it lacks one), so it can name the setting or option involved.
        if case .error(let message) = reply, !isCheck || configuration.acceptConnection == nil {
            let what = step == 0 ? "HELLO/AUTH" : (step == 1 && url.database != 0 ? "SELECT \(url.database)" : "a connection check")
            return close(RedisError(.refused, "\(origin) refused \(what): \(message)"))
        }
        greetingReplies.append(reply)
        guard greetingReplies.count == greetingCount else { return nil }
        if let refusal = configuration.acceptConnection?(Array(greetingReplies.suffix(checks))) {
            return close(RedisError(.refused, refusal))
        }
        state = .ready
        greetingReplies = []
        return .ready(deadline: pendingHead < pending.count ? pending[pendingHead].deadline : .distantFuture)
    }
}
