import Dispatch
internal import StoreRelayNet
import StoreRelaySupport

/// One accepted connection: reads requests, hands them to the handler, writes the answers in
/// request order, and enforces the timeouts and limits of `HTTPServerConfiguration`.
///
/// `@unchecked Sendable` invariant: every `var` is read and written only on `queue` (a
/// serial queue of its own that targets one of the server's shared queues); the socket's
/// channel and the timer deliver their events on `queue`, and responders hop onto it with
/// `queue.async`.
/// The stored properties are internal only so the `HTTPConnection+*.swift` files can share
/// them; nothing outside this type touches them.
final class HTTPConnection: @unchecked Sendable {
    enum Phase {
        /// Serving requests.
        case open
        /// Final answer flushed and write side shut: discarding input until the peer closes
        /// or `lingerTimeout`, so unread input does not turn our close into a reset.
        case lingering
        case closed
    }

    /// What the answer writer needs to know about a request whose answer is outstanding.
    struct PendingAnswer {
        var isHead: Bool
        var version: HTTPVersion
    }

    let id: Int
    let queue: DispatchQueue
    let remoteAddress: String
    let configuration: HTTPServerConfiguration
    let handler: HTTPHandler
    let logger: Logger
    let transport: any Transport
    private let onClose: @Sendable (Int) -> Void

    /// The socket's read and write sources (it closes the descriptor once they are gone).
    var channel: SocketChannel?
    var timer: (any DispatchSourceTimer)?

    var phase = Phase.open
    var parser: HTTPRequestParser
    /// False once no further request will be read: after a request that closes the
    /// connection, a parse error, a timeout, end of input, or while draining.
    var acceptingRequests = true
    var peerClosed = false
    var draining = false
    /// The read side of a transport (TLS) asked to wait for writability.
    var readWantsWrite = false
    /// A read of input the transport already holds is queued (see `updateReadInterest`).
    var bufferedReadScheduled = false

    /// Sequence numbers give every request (and every error answer) its place in line.
    var nextRequestSequence = 0
    var nextAnswerSequence = 0
    var pendingAnswers: [Int: PendingAnswer] = [:]
    var readyAnswers: [Int: [UInt8]] = [:]
    /// A request whose `100 Continue` waits for earlier answers to go out first.
    var continueSequence: Int?
    /// The answer after which the connection closes.
    var closeAfterSequence: Int?
    var closeWhenFlushed = false

    var output: [UInt8] = []
    var outputOffset = 0

    var requestStartedAt: DispatchTime?
    /// When the connection started: a TLS handshake must end by `openedAt + readTimeout`.
    var openedAt = DispatchTime.now()
    var idleSince = DispatchTime.now()
    var lastWriteProgress = DispatchTime.now()
    var lingerDeadline = DispatchTime.distantFuture
    /// When the timer fires next (`refreshTimer` only ever moves it earlier).
    var scheduledDeadline = DispatchTime.distantFuture

    init(
        id: Int, transport: any Transport, remoteAddress: String, queue: DispatchQueue,
        configuration: HTTPServerConfiguration, handler: @escaping HTTPHandler, logger: Logger,
        onClose: @escaping @Sendable (Int) -> Void
    ) {
        self.id = id
        self.transport = transport
        self.remoteAddress = remoteAddress
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
            openedAt = .now()
            idleSince = openedAt
            updateReadInterest()
            refreshTimer()
        }
    }

    /// Stops reading new requests; answers those in flight, then closes (graceful shutdown).
    func beginDraining() {
        queue.async { [self] in
            guard phase == .open, !draining else { return }
            draining = true
            // A request already arriving is let finish (bounded by readTimeout); it will close.
            if acceptingRequests && parser.hasPartialRequest { return }
            acceptingRequests = false
            if nextAnswerSequence == nextRequestSequence {
                if outputOffset == output.count { return closeNow() }
                closeWhenFlushed = true
            } else {
                closeAfterSequence = nextRequestSequence - 1
            }
            updateReadInterest()
            refreshTimer()
        }
    }

    /// Closes at once, answered or not (shutdown deadline passed).
    func forceClose() {
        queue.async { [self] in closeNow() }
    }

    /// Releases everything; the channel closes the descriptor once its sources are gone.
    func closeNow() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard phase != .closed else { return }
        phase = .closed
        pendingAnswers.removeAll()
        readyAnswers.removeAll()
        output = []
        outputOffset = 0
        timer?.cancel()
        channel?.close()
    }

    private func channelClosed() {
        // Dropping the sources breaks the self → source → handler → self cycles.
        channel = nil
        timer = nil
        logger.debug("connection closed", [("http.connection", String(id)), ("http.peer", remoteAddress)])
        onClose(id)
    }

    /// Reads only while a request can be taken: not when the pipeline is full, the output
    /// backed up, or the connection is past its last request (except to linger).
    func updateReadInterest() {
        let wanted: Bool
        switch phase {
        case .closed: return
        case .lingering: wanted = !peerClosed
        case .open: wanted = acceptingRequests && !peerClosed && canTakeRequest
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
        nextRequestSequence - nextAnswerSequence < configuration.maxPipelinedRequests
            && output.count - outputOffset <= configuration.maxPendingOutputBytes
    }
}
