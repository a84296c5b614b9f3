import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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
    private var addresses: [SocketAddress] = []
    private var connectFailures: [String] = []
    private var lastConnectErrno: Int32?
    private var currentAddress: SocketAddress?
    /// The connecting socket, before it has a transport and sources.
    private var connectingFD: Int32 = -1

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
            addresses = resolved
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
        guard !addresses.isEmpty else {
            let reasons = connectFailures.joined(separator: "; ")
            return fail(HTTPClientError(.connect, "cannot connect to \(origin): \(reasons)", errno: lastConnectErrno))
        }
        let address = addresses.removeFirst()
        currentAddress = address
        let fd = SystemCalls.makeStreamSocket(family: address.family)
        guard fd >= 0 else {
            connectFailed(address, errno)
            return connectNext()
        }
        // Connect first, then register the sources. An unconnected TCP socket polls as hung
        // up (EPOLLHUP), and libdispatch drops a descriptor's epoll entry when it sees that
        // (swift-corelibs-libdispatch #833): sources registered before `connect` lost their
        // events on a good share of fresh connections, which then hung.
        let result = SystemCalls.connect(fd, to: address)
        guard result == 0 || errno == EINPROGRESS else {
            connectFailed(address, errno)
            SystemCalls.close(fd)
            return connectNext()
        }
        connectingFD = fd
        // Until the connect ends the channel carries a plain transport; TLS starts after.
        attach(SocketTransport(fileDescriptor: fd))
        if result == 0 { return connected() }
        // In progress: the write source reports the outcome, unless the connect already ended
        // (a refusal on loopback is that fast). A socket that hung up before its sources were
        // registered never wakes them (#833 again), so that one case is asked of the socket.
        if SystemCalls.isWritableOrFailed(fd) { connectFinished() }
    }

    private func attach(_ transport: any Transport) {
        self.transport = transport
        channel = SocketChannel(
            fd: transport.fileDescriptor, queue: queue,
            onReadable: { [self] in readable() },
            onWritable: { [self] in writable() })
    }

    private func connectFailed(_ address: SocketAddress?, _ code: Int32) {
        lastConnectErrno = code
        connectFailures.append("\(address.map(String.init(describing:)) ?? "?"): \(String(cString: strerror(code)))")
    }

    /// The socket became writable while connecting: the connect finished, well or badly.
    func connectFinished() {
        guard let channel else { return }
        let code = SystemCalls.pendingError(channel.fd)
        channel.setWriting(false)
        if code == 0 { return connected() }
        connectFailed(currentAddress, code)
        channel.close()
        self.channel = nil
        transport = nil
        connectNext()
    }

    private func connected() {
        guard key.scheme == .https else { return startExchange() }
        let engine: TLSConnection
        do {
            let context = try client.tlsContext(extraCAFile: key.extraCAFile)
            engine = try TLSConnection(clientContext: context, serverName: key.host)
        } catch {
            return fail(HTTPClientError(.tls, "TLS setup for \(origin) failed: \(error.reason)", tlsError: error))
        }
        let tls = TLSTransport(fileDescriptor: connectingFD, engine: engine, logger: client.configuration.logger, peer: origin)
        transport = tls
        state = .handshaking
        tls.startHandshake()
        receive()
    }
}
