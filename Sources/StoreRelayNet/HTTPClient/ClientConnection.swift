import Dispatch
import StoreRelayCore

/// One TCP (and maybe TLS) connection to one origin, carrying one request at a time: an
/// `OutboundConnection` (resolve, dial, TLS, read, write, deadline) driven by the rules of
/// `ClientConnectionStateMachine`. This type only performs the machine's actions: it owns the
/// request in flight and the connection's place in the pool.
///
/// The invariant behind `@unchecked Sendable`: every mutable property is touched only on
/// `queue`, a serial queue of its own that the driver delivers its events on (checked with
/// `dispatchPrecondition` at each entry). A connection opens once; closed, it is never reused.
final class ClientConnection: @unchecked Sendable {
    let key: PoolKey
    let queue = DispatchQueue(label: "storerelay.httpclient.connection", target: .deliveryWork)
    let client: HTTPClient
    private var machine: ClientConnectionStateMachine
    private var connection: OutboundConnection?
    /// The request being carried (set from `open`/`reuse` until its exchange ends).
    private var task: RequestTask?
    /// `connection.sentByteCount` when the current request was written: more means some of
    /// it reached the socket, and it is not silently retried.
    private var requestStart = 0

    init(key: PoolKey, client: HTTPClient) {
        self.key = key
        self.client = client
        let configuration = client.configuration
        machine = ClientConnectionStateMachine(.init(
            origin: key.origin, connectTimeout: configuration.connectTimeout,
            idleTimeout: configuration.idleTimeout,
            limits: .init(maxHeaderBytes: configuration.maxResponseHeadSize, maxBodyBytes: configuration.maxResponseBodySize)))
    }

    var origin: String { key.origin }

    // MARK: Opening and reuse

    /// Resolves, connects, handshakes, then sends `task`'s request.
    func open(for task: RequestTask) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard connection == nil, task.attach(self) else { return close() }
        self.task = task
        let configuration = client.configuration
        machine.expectResponse(isHeadRequest: task.request.isHead)
        let tls = key.scheme == .https ? TLSClientIdentity(caFile: key.extraCAFile) : nil
        let connection = OutboundConnection(
            to: OutboundEndpoint(host: key.host, port: key.port, tls: tls), peer: origin, connector: client.connector,
            queue: queue, logger: configuration.logger) { [self] event in handle(event) }
        self.connection = connection
        // Held until the connection is established.
        connection.write(task.wire)
        connection.open()
    }

    /// Carries `task` on this pooled connection, or on a fresh one when this one turned out
    /// to be closed by the server while it waited.
    func reuse(for task: RequestTask) {
        dispatchPrecondition(condition: .onQueue(queue))
        // Whatever arrived while idle (an end of stream, stray bytes) closes it now.
        if machine.state == .idle { connection?.readNow() }
        guard let connection, machine.state == .idle else { return client.startOnFreshConnection(task) }
        guard task.attach(self) else {
            // Finished already (timed out, shut down): the connection stays in the pool.
            if !client.checkin(self) { close() }
            return
        }
        self.task = task
        perform(machine.reuse(isHeadRequest: task.request.isHead))
        requestStart = connection.sentByteCount
        connection.write(task.wire)
    }

    // MARK: The driver's events, the machine's actions

    private func handle(_ event: OutboundEvent) {
        guard let connection else { return }
        let requestBytesSent = connection.sentByteCount > requestStart
        let action: ClientConnectionStateMachine.Action
        switch event {
        case .resolved: action = machine.resolved(now: .now())
        case .established: action = machine.established()
        case .received(let bytes): action = machine.received(bytes, outputFlushed: connection.isOutputFlushed, now: .now())
        case .inputEnded: action = machine.inputEnded(requestBytesSent: requestBytesSent)
        case .deadline: action = machine.deadlinePassed()
        case .failed(let error): action = machine.failed(error, requestBytesSent: requestBytesSent)
        }
        perform(action)
    }

    private func perform(_ action: ClientConnectionStateMachine.Action) {
        switch action {
        case .none: break
        case .setDeadline(let time): connection?.setDeadline(time)
        case .complete(let response, let idleUntil): finishExchange(response, idleUntil: idleUntil)
        case .fail(let error): fail(error)
        case .retryOnFreshConnection: retryOnFreshConnection()
        case .closeIdle: closeIdle()
        case .close: close()
        }
    }

    private func finishExchange(_ response: HTTPClientResponse, idleUntil: DispatchTime?) {
        guard let task else { return close() }
        self.task = nil
        if let idleUntil, client.checkin(self) {
            connection?.setDeadline(idleUntil)
        } else {
            close()
        }
        task.finish(.success(response))
    }

    /// Nothing of the request left: the server had closed this pooled connection. Once only,
    /// since a fresh connection is never "reused".
    private func retryOnFreshConnection() {
        guard let task else { return close() }
        client.configuration.logger.debug("pooled connection was closed by the server; retrying on a fresh one", [
            ("http.origin", origin),
        ])
        self.task = nil
        close()
        client.startOnFreshConnection(task)
    }

    private func fail(_ error: HTTPClientError) {
        client.configuration.logger.debug("HTTP request failed", [
            ("http.origin", origin), ("error.code", error.code.description), ("error.message", error.message),
        ])
        let task = self.task
        self.task = nil
        close()
        task?.finish(.failure(error))
    }

    // MARK: The end

    /// The task finished without us (timeout, shutdown): drop the connection if still on it.
    func abandon(_ task: RequestTask) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard self.task === task else { return }
        self.task = nil
        close()
    }

    /// Takes the connection out of the pool for good and closes it.
    func closeIdle() {
        dispatchPrecondition(condition: .onQueue(queue))
        client.pool.remove(self)
        close()
    }

    func close() {
        dispatchPrecondition(condition: .onQueue(queue))
        _ = machine.close()
        connection?.close()
    }
}
