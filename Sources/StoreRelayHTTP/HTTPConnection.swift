import Dispatch
import StoreRelaySupport

/// One accepted connection: reads requests, hands them to the handler, writes the answers in
/// request order, and enforces the timeouts and limits of `HTTPServerConfiguration`.
///
/// `@unchecked Sendable` invariant: every `var` is read and written only on `queue` (a
/// serial queue of its own that targets one of the server's shared queues); the dispatch
/// sources deliver their events on `queue`, and responders hop onto it with `queue.async`.
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
    let transport: any HTTPTransport
    private let onClose: @Sendable (Int) -> Void

    var readSource: (any DispatchSourceRead)?
    var writeSource: (any DispatchSourceWrite)?
    var timer: (any DispatchSourceTimer)?
    var readSuspended = true
    var writeSuspended = true
    var liveSources = 3

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
        id: Int, transport: any HTTPTransport, remoteAddress: String, queue: DispatchQueue,
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
            let fd = transport.fileDescriptor
            let read = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
            let write = DispatchSource.makeWriteSource(fileDescriptor: fd, queue: queue)
            let timer = DispatchSource.makeTimerSource(queue: queue)
            for source in [read, write, timer] as [any DispatchSourceProtocol] {
                source.setCancelHandler { [self] in sourceCancelled() }
            }
            read.setEventHandler { [self] in handleReadable() }
            write.setEventHandler { [self] in handleWritable() }
            timer.setEventHandler { [self] in handleTimer() }
            timer.schedule(deadline: .distantFuture)
            readSource = read
            writeSource = write
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

    /// Releases everything; the descriptor closes in the last cancel handler.
    func closeNow() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard phase != .closed else { return }
        phase = .closed
        pendingAnswers.removeAll()
        readyAnswers.removeAll()
        output = []
        outputOffset = 0
        // A suspended source never runs its cancel handler: resume before cancelling.
        if readSuspended { readSuspended = false; readSource?.resume() }
        if writeSuspended { writeSuspended = false; writeSource?.resume() }
        readSource?.cancel()
        writeSource?.cancel()
        timer?.cancel()
    }

    private func sourceCancelled() {
        liveSources -= 1
        guard liveSources == 0 else { return }
        transport.close()
        // Dropping the sources breaks the self → source → handler → self cycles.
        readSource = nil
        writeSource = nil
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
        if wanted && readSuspended {
            readSuspended = false
            readSource?.resume()
        } else if !wanted && !readSuspended {
            readSuspended = true
            readSource?.suspend()
        }
        // Input a TLS transport already decrypted makes the socket no more readable: read it
        // from here, or a connection that paused its pipeline would wait forever.
        if !readSuspended && transport.hasBufferedInput && !bufferedReadScheduled {
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
