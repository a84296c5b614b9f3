import Dispatch
import StoreRelayCore

/// A non-blocking HTTP/1.1 client on Dispatch, for delivering webhooks.
///
/// Each connection lives on its own serial queue, driven by read/write sources on a
/// non-blocking socket: no thread per request, no blocking call on a request's path. Name
/// resolution runs on a serial queue per host name, so a hung lookup delays nobody else.
/// Idle keep-alive connections are pooled per origin. Call `shutdown()` when done.
public final class HTTPClient: Sendable {
    let configuration: HTTPClientConfiguration
    let pool: ConnectionPool
    /// Name resolution (a serial queue per host name) and one TLS context per extra CA file.
    let connector: OutboundConnector
    /// Overall request deadlines: each expiry is a few lock operations, never I/O.
    private let timerQueue = DispatchQueue(label: "storerelay.httpclient.timers", target: .deliveryWork)
    private struct Tasks {
        var isShutDown = false
        var lastID: UInt64 = 0
        var inFlight: [UInt64: RequestTask] = [:]
    }
    private let tasks = Locked(Tasks())

    public init(configuration: HTTPClientConfiguration = HTTPClientConfiguration()) {
        self.configuration = configuration
        pool = ConnectionPool(maxIdlePerKey: configuration.maxIdleConnectionsPerOrigin)
        connector = OutboundConnector(resolver: configuration.resolver)
    }

    /// Sends `request` and calls `completion` exactly once, on the configured completion
    /// queue, with the whole response or why there is none. `timeout` bounds everything:
    /// resolution, connecting, sending and receiving.
    public func execute(
        _ request: HTTPClientRequest, timeout: Duration,
        completion: @escaping @Sendable (Result<HTTPClientResponse, HTTPClientError>) -> Void
    ) {
        let wire: [UInt8]
        do {
            wire = try request.serialized()
        } catch {
            configuration.completionQueue.async { completion(.failure(error)) }
            return
        }
        let id = tasks.withLock { tasks in
            tasks.lastID += 1
            return tasks.lastID
        }
        let task = RequestTask(request: request, wire: wire, completionQueue: configuration.completionQueue) {
            [self] result in
            tasks.withLock { _ = $0.inFlight.removeValue(forKey: id) }
            completion(result)
        }
        let accepted = tasks.withLock { tasks in
            guard !tasks.isShutDown else { return false }
            tasks.inFlight[id] = task
            return true
        }
        guard accepted else {
            task.finish(.failure(HTTPClientError(.shutdown, "the HTTP client is shut down")))
            return
        }
        task.startTimer(timeout, on: timerQueue) {}
        if let connection = pool.checkout(PoolKey(request)) {
            connection.queue.async { connection.reuse(for: task) }
        } else {
            startOnFreshConnection(task)
        }
    }

    /// Closes idle connections and fails every request in flight with `.shutdown`.
    /// Later requests fail at once.
    public func shutdown() {
        let inFlight = tasks.withLock { tasks in
            tasks.isShutDown = true
            return Array(tasks.inFlight.values)
        }
        for connection in pool.shutDown() {
            connection.queue.async { connection.closeIdle() }
        }
        for task in inFlight {
            task.finish(.failure(HTTPClientError(.shutdown, "the HTTP client was shut down")))
        }
    }

    // MARK: Internal

    func startOnFreshConnection(_ task: RequestTask) {
        guard !task.isFinished else { return }
        let connection = ClientConnection(key: PoolKey(task.request), client: self)
        connection.queue.async { connection.open(for: task) }
    }

    /// Parks an idle connection unless the pool is full or the client shut down.
    func checkin(_ connection: ClientConnection) -> Bool {
        pool.checkin(connection)
    }
}
