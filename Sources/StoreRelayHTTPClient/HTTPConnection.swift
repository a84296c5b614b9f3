import Dispatch
internal import StoreRelayTLS
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One TCP (and maybe TLS) connection to one origin, carrying one request at a time.
///
/// The invariant behind `@unchecked Sendable`: every mutable property is touched only on
/// `queue`, a serial queue of its own (checked with `dispatchPrecondition` at each entry).
/// Life: new → resolving → connecting → handshaking (https) → exchanging ⇄ idle → closed.
/// A connection connects once; after `closed` it is never used again.
final class HTTPConnection: @unchecked Sendable {
    enum State: Equatable { case new, resolving, connecting, handshaking, exchanging, idle, closed }

    let key: PoolKey
    let queue = DispatchQueue(label: "storerelay.httpclient.connection", target: .deliveryWork)
    let client: HTTPClient
    var state = State.new
    var channel: SocketChannel?
    var tls: TLSConnection?
    /// The request being carried (set from `open`/`reuse` until its exchange ends).
    var task: RequestTask?
    var parser = HTTPResponseParser()
    /// Bytes waiting for the socket (ciphertext under TLS), sent from `outboundOffset`.
    var outbound: [UInt8] = []
    var outboundOffset = 0
    /// True once any byte of the current request reached the socket: no silent retry after.
    var sentAny = false
    /// True once the connection served a request: a failure before sending may be a stale
    /// keep-alive connection, worth one retry on a fresh one.
    var wasReused = false
    /// Reused for every `recv`, so reading allocates nothing.
    var readBuffer = [UInt8](repeating: 0, count: 64 * 1024)
    /// Polls the socket while a request is in flight; see `HTTPConnection+Backstop.swift`.
    var backstop: (any DispatchSourceTimer)?
    /// The backstop found the socket ready, during this exchange, when its sources had not
    /// said so for a whole interval (see `HTTPConnection+Backstop.swift`).
    var sourcesMissedEvents = false
    /// Exchanges in a row that needed the backstop. At two the connection is not pooled
    /// again: its sources may never fire again, and every later request on it would wait for
    /// the backstop's ticks.
    var rescuedExchanges = 0
    /// The last backstop tick found the socket ready; no source has fired since.
    var backstopSawReady = false
    /// Bumped each time the connection goes idle, so an old idle timer knows it is stale.
    var idleToken = 0
    private var addresses: [SocketAddress] = []
    private var connectFailures: [String] = []
    private var lastConnectErrno: Int32?
    private var currentAddress: SocketAddress?

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
            startBackstop()
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
        let fd = SocketChannel.makeSocket(family: address.family)
        guard fd >= 0 else {
            connectFailed(address, errno)
            return connectNext()
        }
        // Connect first, then register the sources. An unconnected TCP socket polls as hung
        // up (EPOLLHUP), and libdispatch drops a descriptor's epoll entry when it sees that
        // (swift-corelibs-libdispatch #833): sources registered before `connect` lost their
        // events on a good share of fresh connections, which then waited for the backstop.
        let result = address.withSockaddr { connect(fd, $0, $1) }
        guard result == 0 || errno == EINPROGRESS else {
            connectFailed(address, errno)
            _ = closeDescriptor(fd)
            return connectNext()
        }
        channel = SocketChannel(
            fd: fd, queue: queue,
            onReadable: { [self] in
                backstopSawReady = false
                readable()
            },
            onWritable: { [self] in
                backstopSawReady = false
                writable()
            })
        if result == 0 { return connected() }
        // In progress: the write source reports the outcome.
    }

    private func connectFailed(_ address: SocketAddress?, _ code: Int32) {
        lastConnectErrno = code
        connectFailures.append("\(address.map(String.init(describing:)) ?? "?"): \(String(cString: strerror(code)))")
    }

    /// The socket became writable while connecting: the connect finished, well or badly.
    func connectFinished() {
        guard let channel else { return }
        var code: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(channel.fd, SOL_SOCKET, SO_ERROR, &code, &length)
        channel.setWriting(false)
        if code == 0 { return connected() }
        connectFailed(currentAddress, code)
        channel.close()
        self.channel = nil
        connectNext()
    }

    private func connected() {
        guard key.scheme == .https else { return startExchange() }
        do {
            let context = try client.tlsContext(extraCAFile: key.extraCAFile)
            tls = try TLSConnection(clientContext: context, serverName: key.host)
        } catch {
            return fail(HTTPClientError(.tls, "TLS setup for \(origin) failed: \(error.reason)", tlsError: error))
        }
        state = .handshaking
        advanceHandshake()
    }

    func advanceHandshake() {
        guard let tls else { return }
        do {
            let done = try tls.handshake()
            queueCiphertext()
            if done { startExchange() }
        } catch {
            queueCiphertext()  // the alert tells the server why, when the socket takes it
            fail(HTTPClientError(.tls, "TLS handshake with \(origin) failed: \(error.reason)", tlsError: error))
        }
    }
}
