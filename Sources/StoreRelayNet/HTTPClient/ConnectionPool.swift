import StoreRelayCore

/// What makes two requests able to share a connection: same endpoint, same trust.
struct PoolKey: Hashable, Sendable {
    var scheme: HTTPURL.Scheme
    var host: String
    var port: UInt16
    var extraCAFile: String?

    init(_ request: HTTPClientRequest) {
        scheme = request.url.scheme
        host = request.url.host
        port = request.url.port
        extraCAFile = request.url.scheme == .https ? request.extraCAFile : nil
    }

    /// How logs and errors name the server.
    var origin: String { "\(scheme.rawValue)://\(host):\(port)" }
}

/// Idle keep-alive connections per origin. Only bookkeeping under a lock, never I/O: the
/// connections themselves decide, on their own queues, when they are dead.
final class ConnectionPool: Sendable {
    private struct State {
        var idle: [PoolKey: [ClientConnection]] = [:]
        var isShutDown = false
    }
    private let state = Locked(State())
    private let maxIdlePerKey: Int

    init(maxIdlePerKey: Int) {
        self.maxIdlePerKey = maxIdlePerKey
    }

    /// The most recently used idle connection for `key` (the likeliest still alive).
    func checkout(_ key: PoolKey) -> ClientConnection? {
        state.withLock { $0.idle[key]?.popLast() }
    }

    /// Parks an idle connection; false when the pool is full or shut down (close it then).
    func checkin(_ connection: ClientConnection) -> Bool {
        state.withLock { state in
            guard !state.isShutDown, state.idle[connection.key, default: []].count < maxIdlePerKey else { return false }
            state.idle[connection.key, default: []].append(connection)
            return true
        }
    }

    func remove(_ connection: ClientConnection) {
        state.withLock { state in
            state.idle[connection.key]?.removeAll { $0 === connection }
        }
    }

    /// Empties the pool for good, returning the idle connections to close.
    func shutDown() -> [ClientConnection] {
        state.withLock { state in
            state.isShutDown = true
            defer { state.idle = [:] }
            return state.idle.values.flatMap { $0 }
        }
    }
}
