import StoreRelayCore

/// A connection to the node a MOVED or ASK reply named, on which the client sends the
/// redirected command there, once (docs/SPEC.md "Cluster mode", Topologies). It greets and
/// checks like the client's own connections (credentials, durability checks): the target is
/// where the write lands. Commands sent while it opens wait for it (its connect timeout
/// bounds the wait); once it is gone they fail.
final class RedirectConnection: Sendable {
    let node: HostPort
    private let connection: RedisConnection

    private typealias Replies = @Sendable ([Result<RESPValue, RedisError>]) -> Void
    private typealias Waiting = [(commands: [RESPCommand], completion: Replies)]

    private enum State {
        case opening(Waiting)
        case ready
        case closed(RedisError)
    }
    private let state = Locked(State.opening([]))

    init(node: HostPort, configuration: RedisConfiguration, connector: OutboundConnector) {
        self.node = node
        var target = configuration
        target.url = configuration.url.at(node)
        target.clientName = configuration.clientName.map { $0 + "-redirect" }
        let box = Locked<RedirectConnection?>(nil)
        connection = RedisConnection(
            configuration: target, connector: connector,
            onReady: { box.current?.opened() },
            onClosed: { error in
                box.current?.closed(error)
                box.withLock { $0 = nil }
            })
        box.withLock { $0 = self }
        connection.open()
    }

    var isClosed: Bool {
        if case .closed = state.current { true } else { false }
    }

    /// Sends `commands` there in one write (after `ASKING`, when `asking`); `completion`
    /// gets the replies to `commands` (ASKING's own is left out).
    func send(_ commands: [RESPCommand], asking: Bool, completion: @escaping @Sendable ([Result<RESPValue, RedisError>]) -> Void) {
        // ASKING holds for the next command only: each redirected command gets its own.
        let wire = asking ? commands.flatMap { [RESPCommand("ASKING"), $0] } : commands
        let deliver: Replies = { results in
            completion(asking ? results.enumerated().filter { $0.offset % 2 == 1 }.map(\.element) : results)
        }
        let send = state.withLock { state -> RedisError?? in
            switch state {
            case .opening(var waiting):
                waiting.append((wire, deliver))
                state = .opening(waiting)
                return .none
            case .ready:
                return .some(nil)
            case .closed(let error):
                return .some(error)
            }
        }
        switch send {
        case .none: break
        case .some(nil): connection.send(wire, completion: deliver)
        case .some(let error?): deliver(Array(repeating: .failure(error), count: wire.count))
        }
    }

    func close() {
        connection.shutdown()
    }

    private func opened() {
        let waiting = state.withLock { state -> Waiting in
            guard case .opening(let waiting) = state else { return [] }
            state = .ready
            return waiting
        }
        for (commands, completion) in waiting { connection.send(commands, completion: completion) }
    }

    private func closed(_ error: RedisError) {
        let waiting = state.withLock { state -> Waiting in
            defer { state = .closed(error) }
            guard case .opening(let waiting) = state else { return [] }
            return waiting
        }
        for (commands, completion) in waiting { completion(Array(repeating: .failure(error), count: commands.count)) }
    }
}
