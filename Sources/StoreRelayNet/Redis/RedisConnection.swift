import Dispatch
import StoreRelayCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One connection to a Redis server on the shared transport (`StreamDialer`, `SocketChannel`,
/// `SocketTransport` or `TLSTransport`), carrying any number of pipelined commands: each is
/// written at once, and replies are matched to commands in order (RESP replies come in the
/// order of the commands).
///
/// Life: resolving → connecting → handshaking (rediss) → greeting (HELLO/AUTH, SELECT, the
/// configured checks) → ready → closed. A connection is used once; the client makes a new one
/// to reconnect. `@unchecked Sendable`: every `var` is touched only on `queue`.
final class RedisConnection: @unchecked Sendable {
    enum State: Equatable { case new, resolving, connecting, handshaking, greeting, ready, closed }

    typealias Completion = @Sendable (Result<RESPValue, RedisError>) -> Void

    /// A command sent and not yet answered.
    private struct Pending {
        var completion: Completion
        var deadline: DispatchTime
    }

    let queue = DispatchQueue(label: "storerelay.redis.connection", target: .deliveryWork)
    private let configuration: RedisConfiguration
    /// Called once, on `queue`, when the greeting succeeded.
    private let onReady: @Sendable () -> Void
    /// Called once, on `queue`, when the connection is gone, with why.
    private let onClosed: @Sendable (RedisError) -> Void

    private(set) var state = State.new
    private var dialer = StreamDialer(addresses: [])
    private var channel: SocketChannel?
    private var transport: (any Transport)?
    private var parser: RESPParser
    private var pending: [Pending] = []
    private var pendingHead = 0
    private var output: [UInt8] = []
    private var outputOffset = 0
    private var readBuffer = [UInt8](repeating: 0, count: 64 * 1024)
    private var timer: (any DispatchSourceTimer)?
    private var greetingReplies: [RESPValue] = []
    private var greetingCount = 0

    init(configuration: RedisConfiguration, onReady: @escaping @Sendable () -> Void, onClosed: @escaping @Sendable (RedisError) -> Void) {
        self.configuration = configuration
        parser = RESPParser(limits: configuration.replyLimits)
        self.onReady = onReady
        self.onClosed = onClosed
    }

    private var url: RedisURL { configuration.url }
    var origin: String { url.description }

    // MARK: Opening

    /// Resolves, connects, handshakes and greets; `onReady` or `onClosed` follows.
    func open() {
        queue.async { [self] in
            guard state == .new else { return }
            state = .resolving
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.setEventHandler { [self] in timerFired() }
            timer.schedule(deadline: .now().advanced(by: configuration.connectTimeout))
            timer.resume()
            self.timer = timer
            if let literal = SocketAddress(ip: url.host, port: url.port) {
                return resolved(.success([literal]))
            }
            let (host, port) = (url.host, url.port)
            DispatchQueue.global().async { [self] in
                let result = Result { () throws(SocketError) in try SystemResolver.resolve(host: host, port: port, passive: false) }
                queue.async { [self] in resolved(result) }
            }
        }
    }

    private func resolved(_ result: Result<[SocketAddress], SocketError>) {
        guard state == .resolving else { return }
        switch result {
        case .failure(let error):
            close(RedisError(.unavailable, "cannot resolve \(url.host): \(error)"))
        case .success(let addresses):
            dialer = StreamDialer(addresses: addresses)
            state = .connecting
            dial()
        }
    }

    private func dial() {
        switch dialer.dial() {
        case .connected(let fd):
            attach(fd)
            connected()
        case .inProgress(let fd, let alreadyDone):
            attach(fd)
            if alreadyDone { connectFinished() }
        case .failed(let reason, _):
            close(RedisError(.unavailable, "cannot connect to \(origin): \(reason)"))
        }
    }

    private func attach(_ fd: Int32) {
        transport = SocketTransport(fileDescriptor: fd)
        channel = SocketChannel(
            fd: fd, queue: queue,
            onReadable: { [self] in readable() },
            onWritable: { [self] in writable() })
    }

    private func connectFinished() {
        guard let channel else { return }
        channel.setWriting(false)
        if dialer.finish(fd: channel.fd) { return connected() }
        channel.close()
        self.channel = nil
        transport = nil
        dial()
    }

    private func connected() {
        guard url.usesTLS else { return greet() }
        guard let channel else { return }
        do {
            let context = try TLSContext(clientTrustingExtraCAFile: configuration.caFile,
                                         certificateChainFile: configuration.clientCertificateFile,
                                         privateKeyFile: configuration.clientKeyFile)
            let engine = try TLSConnection(clientContext: context, serverName: url.host)
            let tls = TLSTransport(fileDescriptor: channel.fd, engine: engine, logger: configuration.logger, peer: origin)
            transport = tls
            state = .handshaking
            tls.startHandshake()
            receive()
        } catch {
            close(RedisError(.unavailable, "TLS setup for \(origin) failed: \(error.reason)"))
        }
    }

    /// Authenticates, selects the database and runs the configured checks, pipelined; the
    /// connection is ready once every reply is in and acceptable.
    private func greet() {
        state = .greeting
        var hello = ["2"]
        if url.user != nil || url.password != nil {
            hello += ["AUTH", url.user ?? "default", url.password ?? ""]
        }
        if let name = configuration.clientName { hello += ["SETNAME", name] }
        var commands = [RESPCommand("HELLO", hello)]
        if url.database != 0 { commands.append(RESPCommand("SELECT", String(url.database))) }
        commands += configuration.connectionChecks
        greetingCount = commands.count
        for command in commands {
            enqueue(command) { [self] result in
                // Runs on `queue` (greeting completions are not sent to the callback queue).
                greetingReply(result)
            }
        }
    }

    private func greetingReply(_ result: Result<RESPValue, RedisError>) {
        guard state == .greeting, case .success(let reply) = result else { return }
        let step = greetingReplies.count
        let isCheck = step >= greetingCount - configuration.connectionChecks.count
        // A check's error reply is an answer `acceptConnection` reads ("unknown command" is
        // how a server says it lacks one), so it can name the setting or option involved.
        if case .error(let message) = reply, !isCheck || configuration.acceptConnection == nil {
            let what = step == 0 ? "HELLO/AUTH" : (step == 1 && url.database != 0 ? "SELECT \(url.database)" : "a connection check")
            return close(RedisError(.refused, "\(origin) refused \(what): \(message)"))
        }
        greetingReplies.append(reply)
        guard greetingReplies.count == greetingCount else { return }
        let checkReplies = Array(greetingReplies.suffix(configuration.connectionChecks.count))
        if let refusal = configuration.acceptConnection?(checkReplies) {
            return close(RedisError(.refused, refusal))
        }
        state = .ready
        rescheduleTimer()
        onReady()
    }

    // MARK: Commands

    /// Sends `command` now (pipelined behind any others); `completion` gets its reply on the
    /// configured callback queue. Call on any thread.
    func send(_ command: RESPCommand, completion: @escaping Completion) {
        let callbackQueue = configuration.callbackQueue
        queue.async { [self] in
            guard state == .ready else {
                callbackQueue.async { completion(.failure(RedisError(.unavailable, "not connected to \(self.origin)"))) }
                return
            }
            enqueue(command) { result in callbackQueue.async { completion(result) } }
            flush()
        }
    }

    /// Sends every command in one write; the completions run in order.
    func send(_ commands: [RESPCommand], completion: @escaping @Sendable ([Result<RESPValue, RedisError>]) -> Void) {
        let callbackQueue = configuration.callbackQueue
        queue.async { [self] in
            guard state == .ready else {
                let failure = RedisError(.unavailable, "not connected to \(origin)")
                callbackQueue.async { completion(Array(repeating: .failure(failure), count: commands.count)) }
                return
            }
            let results = Locked<[Result<RESPValue, RedisError>]>([])
            for command in commands {
                enqueue(command) { result in
                    let done = results.withLock { results -> [Result<RESPValue, RedisError>]? in
                        results.append(result)
                        return results.count == commands.count ? results : nil
                    }
                    if let done { callbackQueue.async { completion(done) } }
                }
            }
            flush()
        }
    }

    private func enqueue(_ command: RESPCommand, _ completion: @escaping Completion) {
        command.encode(into: &output)
        let wasEmpty = pendingHead == pending.count
        pending.append(Pending(completion: completion, deadline: .now().advanced(by: configuration.commandTimeout)))
        if wasEmpty && state == .ready { rescheduleTimer() }
        if state == .greeting { flush() }
    }

    // MARK: I/O

    private func readable() {
        switch state {
        case .handshaking, .greeting, .ready: receive()
        default: break
        }
    }

    private func writable() {
        switch state {
        case .connecting: connectFinished()
        case .handshaking: receive()
        case .greeting, .ready: flush()
        default: break
        }
    }

    private func receive() {
        guard let transport, let channel else { return }
        while state == .handshaking || state == .greeting || state == .ready {
            let result = readBuffer.withUnsafeMutableBytes { transport.read(into: $0) }
            switch result {
            case .transferred(let count):
                parser.feed(readBuffer[..<count])
                deliverReplies()
            case .wouldBlock(let readiness):
                if state == .handshaking && !transport.isHandshaking { return greet() }
                if readiness == .writable { channel.setWriting(true) }
                return
            case .endOfStream:
                return close(RedisError(.unavailable, "\(origin) closed the connection"))
            case .failed(let code):
                let reason = (transport as? TLSTransport)?.failureReason ?? String(cString: strerror(code))
                return close(RedisError(.unavailable, "connection to \(origin) failed: \(reason)"))
            }
        }
    }

    private func deliverReplies() {
        while state == .greeting || state == .ready {
            let reply: RESPValue
            do {
                guard let next = try parser.next() else { return }
                reply = next
            } catch where error.exceedsLimits {
                return close(RedisError(.replyTooLarge, "\(origin) sent a reply larger than this client accepts (\(error)); "
                    + "the connection was closed"))
            } catch {
                return close(RedisError(.protocolError, "\(origin) sent bytes that are not RESP2: \(error)"))
            }
            guard pendingHead < pending.count else {
                return close(RedisError(.protocolError, "\(origin) sent a reply nothing asked for"))
            }
            let completion = pending[pendingHead].completion
            pendingHead += 1
            if pendingHead == pending.count {
                pending.removeAll(keepingCapacity: true)
                pendingHead = 0
            }
            completion(.success(reply))
        }
    }

    private func flush() {
        guard let channel, let transport, !channel.isClosed else { return }
        while outputOffset < output.count {
            let result = output.withUnsafeBytes { transport.write(UnsafeRawBufferPointer(rebasing: $0[outputOffset...])) }
            switch result {
            case .transferred(let count):
                outputOffset += count
            case .wouldBlock(.writable):
                return channel.setWriting(true)
            case .wouldBlock(.readable):
                return  // a TLS write waiting on input: the next read retries
            case .endOfStream, .failed:
                return close(RedisError(.unavailable, "connection to \(origin) broke while sending"))
            }
        }
        output.removeAll(keepingCapacity: output.capacity <= 1 << 20)
        outputOffset = 0
        channel.setWriting(false)
    }

    // MARK: Deadlines and the end

    /// Until ready, the connect timeout; then the oldest unanswered command's deadline.
    private func rescheduleTimer() {
        guard state == .ready else { return }
        timer?.schedule(deadline: pendingHead < pending.count ? pending[pendingHead].deadline : .distantFuture)
    }

    private func timerFired() {
        switch state {
        case .closed:
            return
        case .ready:
            guard pendingHead < pending.count else { return rescheduleTimer() }
            if DispatchTime.now() >= pending[pendingHead].deadline {
                return close(RedisError(.timeout, "\(origin) did not answer within \(configuration.commandTimeout)"))
            }
            rescheduleTimer()
        default:
            close(RedisError(.unavailable, "no connection to \(origin) within \(configuration.connectTimeout)"))
        }
    }

    /// Closes the connection (from any thread): every command still unanswered fails.
    func shutdown() {
        queue.async { [self] in close(RedisError(.shutdown, "the Redis client was shut down")) }
    }

    /// Closes the connection (from any thread) as if it had failed with `error`.
    func drop(_ error: RedisError) {
        queue.async { [self] in close(error) }
    }

    private func close(_ error: RedisError) {
        guard state != .closed else { return }
        state = .closed
        timer?.cancel()
        timer = nil
        let unanswered = pending[pendingHead...]
        pending = []
        pendingHead = 0
        if let transport, channel?.isClosed == false { transport.shutdownWrite() }
        channel?.close()
        channel = nil
        transport = nil
        // The client learns first, so whoever hears of a failed command sees it disconnected.
        onClosed(error)
        for command in unanswered { command.completion(.failure(error)) }
    }
}
