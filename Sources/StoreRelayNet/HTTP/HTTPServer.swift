import Dispatch
import StoreRelayCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A non-blocking HTTP/1.1 server on Dispatch: one listening socket, accept driven by a read
/// source, and per connection a serial queue (targeting one of `queueCount` shared queues)
/// with read, write and timer sources. No thread per connection. With `configuration.tls`
/// every connection speaks TLS (`TLSTransport`), driven by the same sources.
///
/// ```swift
/// let server = HTTPServer(configuration: .init(address: "127.0.0.1:0"), handler: routes.handler)
/// let port = try server.start()
/// server.shutdown { print("stopped") }
/// ```
///
/// `@unchecked Sendable` invariant: the mutable state below is touched only on `queue`
/// (accept source events, connection close notices and shutdown all run there);
/// `boundAddress` is a `Locked` box readable from anywhere.
public final class HTTPServer: @unchecked Sendable {
    private enum State {
        case idle, running, stopping, stopped
    }

    public let configuration: HTTPServerConfiguration
    private let handler: HTTPHandler
    private let logger: Logger
    private let queue = DispatchQueue(label: "storerelay.http.accept")
    private let sharedQueues: [DispatchQueue]
    private let boundAddress = Locked<SocketAddress?>(nil)
    /// `accept4` in production; tests inject failures such as EMFILE.
    private let acceptFunction: ListeningSocket.AcceptFunction

    private var state = State.idle
    private var listenFD: Int32 = -1
    private var acceptSource: (any DispatchSourceRead)?
    private var acceptSuspended = true
    private var acceptBackingOff = false
    private var connections: [Int: HTTPConnection] = [:]
    /// The same connections by client, and who gives way at a limit.
    private var limits: ConnectionLimits
    private var nextConnectionID = 0
    private var shutdownCompletions: [@Sendable () -> Void] = []

    public convenience init(configuration: HTTPServerConfiguration, logger: Logger = .disabled, handler: @escaping HTTPHandler) {
        self.init(configuration: configuration, logger: logger, handler: handler, accept: ListeningSocket.systemAccept)
    }

    init(
        configuration: HTTPServerConfiguration, logger: Logger, handler: @escaping HTTPHandler,
        accept: @escaping ListeningSocket.AcceptFunction
    ) {
        acceptFunction = accept
        self.configuration = configuration
        self.handler = handler
        self.logger = logger
        limits = ConnectionLimits(
            maxConnections: configuration.maxConnections, maxPerClient: configuration.maxConnectionsPerAddress)
        sharedQueues = (0..<max(1, configuration.queueCount)).map {
            DispatchQueue(label: "storerelay.http.io.\($0)", target: .nonBlockingWork)
        }
    }

    /// The bound address as `ip:port` (`[ip]:port` for IPv6), once started.
    public var localAddress: String? { boundAddress.current?.description }

    /// The bound port, once started (the real one when the configuration asked for port 0).
    public var port: Int? { boundAddress.current.map { Int($0.port) } }

    /// Open connections right now.
    public var connectionCount: Int { queue.sync { connections.count } }

    /// Binds, listens and starts accepting. Returns the bound port.
    @discardableResult
    public func start() throws(HTTPServerError) -> Int {
        guard queue.sync(execute: { state == .idle }) else {
            throw HTTPServerError(.alreadyStarted, "the server was already started")
        }
        let (fd, address) = try Self.listen(configuration)
        boundAddress.withLock { $0 = address }
        let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        source.setEventHandler { [self] in acceptConnections() }
        source.setCancelHandler { [self] in
            SystemCalls.close(fd)
            acceptSource = nil
            finishShutdownIfDone()
        }
        queue.sync {
            listenFD = fd
            acceptSource = source
            state = .running
            updateAcceptSource()
        }
        logger.info("http listening", [("http.address", address.description), ("http.tls", configuration.tls == nil ? "no" : "yes")])
        return Int(address.port)
    }

    /// Graceful shutdown: stops accepting, closes idle connections, lets requests in flight
    /// be answered (their connections then close), and calls `completion` once every
    /// connection is closed. After `shutdownTimeout` the remaining connections are closed
    /// anyway. Safe to call more than once and from any thread.
    public func shutdown(completion: @escaping @Sendable () -> Void = {}) {
        queue.async { [self] in
            switch state {
            case .idle, .stopped:
                state = .stopped
                DispatchQueue.global().async(execute: completion)
            case .stopping:
                shutdownCompletions.append(completion)
            case .running:
                state = .stopping
                shutdownCompletions.append(completion)
                if acceptSuspended {
                    acceptSuspended = false
                    acceptSource?.resume()
                }
                acceptSource?.cancel()
                for connection in connections.values { connection.beginDraining() }
                queue.asyncAfter(deadline: .now().advanced(by: configuration.shutdownTimeout)) { [self] in
                    guard state == .stopping else { return }
                    logger.warning("shutdown deadline passed; closing connections", [("http.open", connections.count)])
                    for connection in connections.values { connection.forceClose() }
                }
            }
        }
    }

    private func finishShutdownIfDone() {
        guard state == .stopping, acceptSource == nil, connections.isEmpty else { return }
        state = .stopped
        logger.info("http stopped")
        let completions = shutdownCompletions
        shutdownCompletions = []
        for completion in completions { DispatchQueue.global().async(execute: completion) }
    }

    /// Accepts while the socket has connections and descriptors last, making room at the
    /// connection limits as `ConnectionLimits` decides.
    private func acceptConnections() {
        dispatchPrecondition(condition: .onQueue(queue))
        for _ in 0..<64 {
            guard state == .running, !acceptSuspended else { break }
            if limits.isFull {
                // Look only for a connection that is really waiting (one poll, at the limit
                // only): a spurious wake-up must not close a connection for nothing.
                guard ListeningSocket.hasPendingConnection(listenFD) else { break }
                // With every connection owing an answer, the new one waits in the kernel
                // backlog and is served late rather than refused.
                guard limits.anyCouldGiveWay(standing: standing(of:)) else {
                    backOff()
                    break
                }
            }
            let (fd, peer) = ListeningSocket.accept(listenFD, using: acceptFunction)
            if fd < 0 {
                let error = errno
                switch error {
                case EINTR, ECONNABORTED, EPROTO:
                    continue
                case EAGAIN, EWOULDBLOCK:
                    break
                default:
                    // EMFILE/ENFILE: the listening socket stays readable, so retrying at once
                    // would spin. Pause, and let closing connections free descriptors.
                    logger.warning("accept failed; pausing", [("errno", error)])
                    backOff()
                }
                break
            }
            let client = peer.addressGroup
            switch limits.admit(client, standing: standing(of:)) {
            case .admit(let shedding, let idleOnly):
                if let shedding { shed(shedding, idleOnly: idleOnly) }
                open(fd: fd, peer: peer, client: client)
            case .refuse(let refusal):
                // Debug level: under a flood this is every connection of the flood.
                logger.debug("connection refused at a connection limit", [
                    ("http.peer", peer.description),
                    ("http.limit", refusal == .clientLimit ? "max-connections-per-address" : "max-connections"),
                ])
                SystemCalls.close(fd)
            }
        }
        updateAcceptSource()
    }

    private func standing(of id: Int) -> ConnectionStanding? {
        connections[id]?.standing.current
    }

    /// Asks connection `id` (counted as leaving already) to close. It may decline (a request
    /// became whole meanwhile): it is then served, and counted again.
    private func shed(_ id: Int, idleOnly: Bool) {
        guard let connection = connections[id] else { return }
        connection.shed(idleOnly: idleOnly) { [self] in queue.async { self.limits.declined(id) } }
    }

    private func open(fd: Int32, peer: SocketAddress, client: String) {
        guard let transport = makeTransport(fd: fd, peer: peer) else { return }
        nextConnectionID += 1
        let id = nextConnectionID
        let connection = HTTPConnection(
            id: id, transport: transport, remoteAddress: peer.description, peerHost: peer.host,
            queue: DispatchQueue(label: "storerelay.http.connection", target: sharedQueues[id % sharedQueues.count]),
            configuration: configuration, handler: handler, logger: logger,
            onClose: { [self] id in queue.async { self.connectionClosed(id) } })
        connections[id] = connection
        limits.opened(id, client: client)
        connection.start()
    }

    /// A plain socket, or TLS over it when configured (the handshake runs on the
    /// connection's queue, not here).
    private func makeTransport(fd: Int32, peer: SocketAddress) -> (any Transport)? {
        guard let tls = configuration.tls else { return SocketTransport(fileDescriptor: fd) }
        do {
            return TLSTransport(fileDescriptor: fd, engine: try tls.context.makeConnection(), logger: logger, peer: peer.description)
        } catch {
            // Only an allocation failure in OpenSSL gets here; drop this connection, keep serving.
            logger.warning("cannot start TLS for a connection", [("http.peer", peer.description), ("tls.error", error.description)])
            SystemCalls.close(fd)
            return nil
        }
    }

    private func connectionClosed(_ id: Int) {
        connections[id] = nil
        limits.closed(id)
        updateAcceptSource()
        finishShutdownIfDone()
    }

    private func backOff() {
        guard !acceptBackingOff else { return }
        acceptBackingOff = true
        queue.asyncAfter(deadline: .now().advanced(by: configuration.acceptBackoff)) { [self] in
            acceptBackingOff = false
            updateAcceptSource()
        }
    }

    /// Accepting runs unless backing off (descriptors ran out, or every connection was busy
    /// at `maxConnections`).
    private func updateAcceptSource() {
        guard state == .running, let source = acceptSource else { return }
        let wanted = !acceptBackingOff
        if wanted && acceptSuspended {
            acceptSuspended = false
            source.resume()
        } else if !wanted && !acceptSuspended {
            acceptSuspended = true
            source.suspend()
        }
    }
}

extension HTTPServer {
    /// The listening socket for `configuration.address`, parsed by the one `host:port` parser.
    static func listen(_ configuration: HTTPServerConfiguration) throws(HTTPServerError) -> (Int32, SocketAddress) {
        let address: HostPort
        do {
            address = try HostPort.parse(configuration.address)
        } catch {
            throw HTTPServerError(.invalidAddress, "listen address '\(configuration.address)' is not valid: \(error)")
        }
        do {
            let (fd, bound) = try ListeningSocket.open(address, backlog: configuration.backlog)
            return (fd, bound)
        } catch {
            let code: HTTPServerError.Code = switch error.code {
            case .resolutionFailed: .resolutionFailed
            case .socketFailed: .socketFailed
            case .bindFailed: .bindFailed
            case .listenFailed: .listenFailed
            }
            throw HTTPServerError(code, error.detail, errno: error.errno)
        }
    }
}
