import Dispatch
import StoreRelayCore

/// One accepted connection: reads requests, hands them to the handler, writes the answers in
/// request order, and enforces the timeouts and limits of `HTTPServerConfiguration`.
///
/// The rules (which request is the last, when to close or linger) are `ConnectionStateMachine`'s;
/// this type does the I/O they call for: the socket's sources, the parser, the output buffer
/// and one timer for every deadline.
///
/// `@unchecked Sendable` invariant: every `var` is read and written only on `queue` (a
/// serial queue of its own that targets one of the server's shared queues); the socket's
/// channel and the timer deliver their events on `queue`, and responders hop onto it with
/// `queue.async`. The `HTTPConnection+*.swift` files are this type's I/O and its timeouts.
final class HTTPConnection: @unchecked Sendable {
    let id: Int
    let queue: DispatchQueue
    let remoteAddress: String
    /// The client's IP address alone.
    let peerHost: String
    let configuration: HTTPServerConfiguration
    let handler: HTTPHandler
    let logger: Logger
    let transport: any Transport
    private let onClose: @Sendable (Int) -> Void

    /// The socket's read and write sources (it closes the descriptor once they are gone).
    var channel: SocketChannel?
    var timer: (any DispatchSourceTimer)?

    var machine = ConnectionStateMachine()
    var parser: HTTPRequestParser
    var output = OutputBuffer()
    var times = ConnectionTimes()
    /// The read side of a transport (TLS) asked to wait for writability.
    var readWantsWrite = false
    /// A read of input the transport already holds is queued (see `updateReadInterest`).
    var bufferedReadScheduled = false
    /// Where the connection stands (nil while it owes an answer): read by the server, on its
    /// own queue, to choose which connection to shed at a connection limit. A new connection
    /// is idle from the start (it may never send a byte).
    let standing = Locked<ConnectionStanding?>(ConnectionStanding(isIdle: true, earnedUntil: .now()))

    init(
        id: Int, transport: any Transport, remoteAddress: String, peerHost: String, queue: DispatchQueue,
        configuration: HTTPServerConfiguration, handler: @escaping HTTPHandler, logger: Logger,
        onClose: @escaping @Sendable (Int) -> Void
    ) {
        self.id = id
        self.transport = transport
        self.remoteAddress = remoteAddress
        self.peerHost = peerHost
        self.queue = queue
        self.configuration = configuration
        self.handler = handler
        self.logger = logger
        self.onClose = onClose
        parser = HTTPRequestParser(limits: configuration.parserLimits)
    }

    /// Creates the sources on `queue` and starts reading. Call once, from any thread.
    func start() {
        queue.async { [self] in
            let channel = SocketChannel(
                fd: transport.fileDescriptor, queue: queue,
                onReadable: { [self] in handleReadable() },
                onWritable: { [self] in handleWritable() },
                onClosed: { [self] in channelClosed() })
            // Both sides start on; nothing is owed yet, and reading waits for interest below.
            channel.setWriting(false)
            channel.setReading(false)
            self.channel = channel
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.setEventHandler { [self] in handleTimer() }
            timer.schedule(deadline: .distantFuture)
            self.timer = timer
            timer.resume()
            times = ConnectionTimes()
            times.publishedStanding = standing.current
            updateReadInterest()
            refreshTimer()
        }
    }

    /// Stops reading new requests; answers those in flight, then closes (graceful shutdown).
    /// A request already arriving is let finish (bounded by the read timeout) and is the last.
    func beginDraining() {
        queue.async { [self] in
            perform(machine.drain(requestArriving: parser.hasPartialRequest, outputFlushed: output.isFlushed))
            updateReadInterest()
            refreshTimer()
        }
    }

    /// Closes at once, answered or not (shutdown deadline passed).
    func forceClose() {
        queue.async { [self] in closeNow() }
    }

    /// Closes at once to make room at a connection limit, if still idle (`idleOnly`) or at
    /// least not owing an answer; otherwise calls `declined` (a request arrived meanwhile:
    /// it is served).
    func shed(idleOnly: Bool, declined: @escaping @Sendable () -> Void) {
        queue.async { [self] in
            guard machine.state != .closed else { return }
            guard let standing = currentStanding, standing.isIdle || !idleOnly else { return declined() }
            logger.debug("connection shed at a connection limit", [
                ("http.peer", remoteAddress), ("http.idle", standing.isIdle ? "yes" : "no"),
            ])
            closeNow()
        }
    }

    func closeNow() {
        perform(machine.close())
    }

    /// Does what the state machine decided.
    func perform(_ action: ConnectionStateMachine.Action) {
        dispatchPrecondition(condition: .onQueue(queue))
        switch action {
        case .none:
            break
        case .linger:
            // Half-close after the final answer; what the peer still sends is read and dropped.
            transport.shutdownWrite()
            parser = HTTPRequestParser(limits: configuration.parserLimits)
        case .close:
            // Releases everything; the channel closes the descriptor once its sources are gone.
            output = OutputBuffer()
            timer?.cancel()
            channel?.close()
        }
    }

    private func channelClosed() {
        // Dropping the sources breaks the self → source → handler → self cycles.
        channel = nil
        timer = nil
        logger.debug("connection closed", [("http.connection", id), ("http.peer", remoteAddress)])
        onClose(id)
    }

    /// Reads only while a request can be taken: not when the pipeline is full, the output
    /// backed up, or the connection is past its last request (except to linger).
    func updateReadInterest() {
        let wanted: Bool
        switch machine.state {
        case .closed: return
        case .lingering: wanted = true
        case .serving, .finishing, .flushingFinal: wanted = machine.isTakingRequests && canTakeRequest
        }
        channel?.setReading(wanted)
        // Input a TLS transport already decrypted makes the socket no more readable: read it
        // from here, or a connection that paused its pipeline would wait forever.
        if channel?.reading == true && transport.hasBufferedInput && !bufferedReadScheduled {
            bufferedReadScheduled = true
            queue.async { [self] in
                bufferedReadScheduled = false
                handleReadable()
            }
        }
    }

    /// Whether another request may be read ahead of the answers still owed.
    var canTakeRequest: Bool {
        machine.answers.outstanding < configuration.maxPipelinedRequests
            && output.pendingCount <= configuration.maxPendingOutputBytes
    }
}

/// Bytes queued for the peer, written as the socket takes them.
struct OutputBuffer {
    private var bytes: [UInt8] = []
    private var offset = 0

    var isFlushed: Bool { offset == bytes.count }
    var pendingCount: Int { bytes.count - offset }

    mutating func append(_ more: [UInt8]) {
        bytes.append(contentsOf: more)
    }

    /// Offers the unwritten bytes to `write`, which returns how many it wrote.
    mutating func write(_ write: (UnsafeRawBufferPointer) -> Int) {
        offset += bytes.withUnsafeBytes { write(UnsafeRawBufferPointer(rebasing: $0[offset...])) }
        if offset == bytes.count {
            bytes.removeAll(keepingCapacity: bytes.capacity <= 64 * 1024)
            offset = 0
        }
    }
}

/// When things last happened on a connection; its deadlines follow from these.
struct ConnectionTimes {
    /// A TLS handshake must end by `opened` plus the read timeout.
    var opened = DispatchTime.now()
    var idleSince = DispatchTime.now()
    /// Whether a whole request has arrived yet: until then, waiting for one is bounded by
    /// the header and read timeouts, not the idle timeout.
    var receivedRequest = false
    /// The standing last published to the server (nil: owes an answer), so the lock is taken
    /// only when it changes.
    var publishedStanding: ConnectionStanding?
    /// The first byte of the request now arriving; nil between requests, and while the
    /// pipeline is paused (no read timeout then).
    var requestStarted: DispatchTime?
    /// When the head of the request now arriving was whole and its body began; nil otherwise
    /// (the minimum body rate counts from here).
    var bodyStarted: DispatchTime?
    /// Bytes read since the last whole request: the progress of the one now arriving.
    var requestBytes = 0
    /// The write timeout counts from here while output is pending.
    var lastWriteProgress = DispatchTime.now()
    /// When the timer fires next (`refreshTimer` only ever moves it earlier).
    var timerDeadline = DispatchTime.distantFuture
}
