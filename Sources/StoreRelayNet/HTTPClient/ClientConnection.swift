import Dispatch

/// One TCP (and maybe TLS) connection to one origin, carrying one request at a time, over the
/// same transport (`StoreRelayNet`) as the servers' connections.
///
/// The invariant behind `@unchecked Sendable`: every mutable property is touched only on
/// `queue`, a serial queue of its own (checked with `dispatchPrecondition` at each entry).
/// Life: new → resolving → connecting → handshaking (https) → exchanging ⇄ idle → closed.
/// A connection connects once; after `closed` it is never used again.
final class ClientConnection: @unchecked Sendable {
    enum State: Equatable { case new, resolving, connecting, handshaking, exchanging, idle, closed }

    let key: PoolKey
    let queue = DispatchQueue(label: "storerelay.httpclient.connection", target: .deliveryWork)
    let client: HTTPClient
    var state = State.new
    /// The socket's sources; its transport (plain or TLS) carries the bytes.
    var channel: SocketChannel?
    var transport: (any Transport)?
    /// The request being carried (set from `open`/`reuse` until its exchange ends).
    var task: RequestTask?
    var parser = HTTPResponseParser()
    /// The request's bytes, sent from `outboundOffset` (plaintext: the transport encrypts).
    var outbound: [UInt8] = []
    var outboundOffset = 0
    /// True once any byte of the current request reached the socket: no silent retry after.
    var sentAny = false
    /// True once the connection served a request: a failure before sending may be a stale
    /// keep-alive connection, worth one retry on a fresh one.
    var wasReused = false
    /// Reused for every read, so reading allocates nothing.
    var readBuffer = [UInt8](repeating: 0, count: 64 * 1024)
    /// Bumped each time the connection goes idle, so an old idle timer knows it is stale.
    var idleToken = 0
    private var dialer = StreamDialer(addresses: [])

    init(key: PoolKey, client: HTTPClient) {
        self.key = key
        self.client = client
    }

    var origin: String { "\(key.scheme.rawValue)://\(key.host):\(key.port)" }

    // MARK: Opening

    /// Resolves, connects, handshakes, then sends `task`'s request.
    func open(for task: RequestTask) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard state == .new, task.attach(self) else { return close() }
        self.task = task
        state = .resolving
        client.resolvers.resolve(host: key.host, port: key.port, replyOn: queue) { [self] result in
            resolved(result)
        }
    }

    private func resolved(_ result: Result<[SocketAddress], HTTPClientError>) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard state == .resolving, task != nil else { return close() }
        switch result {
        case .failure(let error):
            fail(error)
        case .success(let resolved):
            dialer = StreamDialer(addresses: resolved)
            let timeout = client.configuration.connectTimeout
            queue.asyncAfter(deadline: .now() + timeout.dispatchInterval) { [self] in
                if state == .connecting || state == .handshaking {
                    fail(HTTPClientError(.connectTimeout, "no connection to \(origin) within \(timeout)"))
                }
            }
            state = .connecting
            connectNext()
        }
    }

    /// Tries the next resolved address; after the last, fails with every reason seen.
    private func connectNext() {
        switch dialer.dial() {
        case .connected(let fd):
            attach(SocketTransport(fileDescriptor: fd))
            connected()
        case .inProgress(let fd, let alreadyDone):
            // Until the connect ends the channel carries a plain transport; TLS starts after.
            attach(SocketTransport(fileDescriptor: fd))
            if alreadyDone { connectFinished() }
        case .failed(let reason, let code):
            fail(HTTPClientError(.connect, "cannot connect to \(origin): \(reason)", errno: code))
        }
    }

    private func attach(_ transport: any Transport) {
        self.transport = transport
        channel = SocketChannel(
            fd: transport.fileDescriptor, queue: queue,
            onReadable: { [self] in readable() },
            onWritable: { [self] in writable() })
    }

    /// The socket became writable while connecting: the connect finished, well or badly.
    func connectFinished() {
        guard let channel else { return }
        channel.setWriting(false)
        if dialer.finish(fd: channel.fd) { return connected() }
        channel.close()
        self.channel = nil
        transport = nil
        connectNext()
    }

    private func connected() {
        guard key.scheme == .https else { return startExchange() }
        guard let channel else { return close() }
        let engine: TLSConnection
        do {
            let context = try client.tlsContext(extraCAFile: key.extraCAFile)
            engine = try TLSConnection(clientContext: context, serverName: key.host)
        } catch {
            return fail(HTTPClientError(.tls, "TLS setup for \(origin) failed: \(error.reason)", tlsError: error))
        }
        let tls = TLSTransport(fileDescriptor: channel.fd, engine: engine, logger: client.configuration.logger, peer: origin)
        transport = tls
        state = .handshaking
        tls.startHandshake()
        receive()
    }
}
