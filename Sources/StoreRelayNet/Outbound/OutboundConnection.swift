import Dispatch
public import StoreRelayCore

/// The one driver of an outbound connection: name resolution (through the connector's one
/// injectable resolver), dialing each address in turn, the TLS upgrade (with the connector's
/// cached context for the endpoint's trust and identity), the read loop, buffered writes, one
/// deadline, and close. A protocol client (HTTP/1, RESP, and the next ones) is a small state
/// machine that the driver feeds `OutboundEvent`s; the client writes, sets the deadline and
/// closes through it. Everything runs on non-blocking sockets watched by `SocketChannel`, over
/// the same `Transport`s as the servers' connections.
///
/// Life: new → resolving → connecting → handshaking (TLS) → established → closed. A connection
/// is opened once; after `closed` it is never used again.
///
/// A protocol client is two small types: a state machine (a struct fed the events and the
/// facts only the driver knows, returning actions, no I/O: `ClientConnectionStateMachine`,
/// `RESPPipelineStateMachine`) and a class that owns one `OutboundConnection` on its queue,
/// feeds the machine and performs its actions (`ClientConnection`, `RedisConnection`).
///
/// The invariant behind `@unchecked Sendable`: every `var` is touched only on `queue`, a serial
/// queue given by the client (whose own state lives there too); the channel, the timer and the
/// resolver's reply all deliver there, and every entry point checks it with
/// `dispatchPrecondition`. The client holds the connection and the connection its client's
/// event handler, until `close` (or a failure) lets go of the handler.
public final class OutboundConnection: @unchecked Sendable {
    public enum Phase: Sendable, Equatable { case new, resolving, connecting, handshaking, established, closed }

    public let queue: DispatchQueue
    public let endpoint: OutboundEndpoint
    /// How the peer is named in messages and logs (the client's own spelling: a URL, an origin).
    public let peer: String
    let connector: OutboundConnector
    let logger: Logger
    var onEvent: ((OutboundEvent) -> Void)?

    public internal(set) var phase = Phase.new
    var dialer = StreamDialer(addresses: [])
    /// The socket's sources; its transport (plain, then TLS when asked for) carries the bytes.
    var channel: SocketChannel?
    var transport: (any Transport)?
    var timer: (any DispatchSourceTimer)?
    /// Bytes the client wrote, sent from `outputOffset` (plaintext: a TLS transport encrypts).
    var output: [UInt8] = []
    var outputOffset = 0
    /// Every byte that reached the transport since the connection opened.
    public internal(set) var sentByteCount = 0
    /// Reused for every read, so reading allocates nothing.
    var readBuffer = [UInt8](repeating: 0, count: 64 * 1024)

    /// `onEvent` runs on `queue`, for each event of `OutboundEvent`'s story.
    public init(
        to endpoint: OutboundEndpoint, peer: String, connector: OutboundConnector, queue: DispatchQueue, logger: Logger,
        onEvent: @escaping (OutboundEvent) -> Void
    ) {
        self.endpoint = endpoint
        self.peer = peer
        self.connector = connector
        self.queue = queue
        self.logger = logger
        self.onEvent = onEvent
    }

    // MARK: Opening

    /// Resolves, connects and (for TLS) handshakes; `established` or `failed` follows.
    public func open() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard phase == .new else { return }
        phase = .resolving
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.setEventHandler { [self] in deadlinePassed() }
        timer.schedule(deadline: .distantFuture)
        timer.resume()
        self.timer = timer
        connector.resolvers.resolve(host: endpoint.host, port: endpoint.port, replyOn: queue) { [self] result in
            resolved(result)
        }
    }

    private func resolved(_ result: Result<[SocketAddress], any Error>) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard phase == .resolving else { return }
        switch result {
        case .failure(let error):
            fail(OutboundError(.resolution, "cannot resolve \(endpoint.host): \(error)", resolverError: error))
        case .success(let addresses):
            dialer = StreamDialer(addresses: addresses)
            phase = .connecting
            emit(.resolved)
            if phase == .connecting { dialNext() }
        }
    }

    /// Tries the next resolved address; after the last, fails with every reason seen.
    private func dialNext() {
        switch dialer.dial() {
        case .connected(let fd):
            attach(fd)
            connected()
        case .inProgress(let fd, let alreadyDone):
            attach(fd)
            if alreadyDone { connectFinished() }
        case .failed(let reason, let code):
            fail(OutboundError(.connect, "cannot connect to \(peer): \(reason)", errno: code))
        }
    }

    /// Until the connect ends the channel carries a plain transport; TLS starts after.
    private func attach(_ fd: Int32) {
        transport = SocketTransport(fileDescriptor: fd)
        channel = SocketChannel(
            fd: fd, queue: queue,
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
        dialNext()
    }

    private func connected() {
        guard let channel else { return }
        // Watched for the connect's end only; from now on, while output waits.
        channel.setWriting(false)
        guard let identity = endpoint.tls else { return established() }
        startHandshake(identity)
    }

    /// Starts TLS on an established plaintext connection, for a protocol that upgrades in
    /// band (NATS after its INFO line): nothing written meanwhile goes out in plaintext, and
    /// `established` is delivered again once the handshake is done. Bytes the peer sent
    /// before its first handshake record must already have been consumed.
    public func startTLS(_ identity: TLSClientIdentity) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard phase == .established, transport is SocketTransport, isOutputFlushed else {
            return fail(OutboundError(.tlsSetup, "cannot start TLS with \(peer) now (already TLS, or plaintext still being sent)"))
        }
        startHandshake(identity)
    }

    private func startHandshake(_ identity: TLSClientIdentity) {
        guard let channel else { return }
        let engine: TLSConnection
        do {
            engine = try TLSConnection(clientContext: try connector.tlsContext(for: identity), serverName: endpoint.host)
        } catch {
            return fail(OutboundError(.tlsSetup, "TLS setup for \(peer) failed: \(error.reason)", tlsReason: error.reason, tlsError: error))
        }
        let tls = TLSTransport(fileDescriptor: channel.fd, engine: engine, logger: logger, peer: peer)
        transport = tls
        phase = .handshaking
        tls.startHandshake()
        receive()
    }

    /// The connection can carry the protocol: the client hears of it, then what it wrote
    /// meanwhile goes out.
    func established() {
        phase = .established
        emit(.established)
        if phase == .established { flush() }
    }
}
