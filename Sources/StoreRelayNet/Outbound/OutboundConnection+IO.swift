import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The read loop, buffered writes, the deadline and the end (all on `queue`).
extension OutboundConnection {
    // MARK: For the protocol client

    /// Queues `bytes` behind what is already waiting and sends what the socket takes now.
    /// Written before `established`, they wait for it (a TLS transport cannot send earlier).
    public func write(_ bytes: some Collection<UInt8>) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard phase != .closed else { return }
        output.append(contentsOf: bytes)
        if phase == .established { flush() }
    }

    /// Nothing written waits: every byte reached the transport.
    public var isOutputFlushed: Bool { outputOffset == output.count }

    /// Reads what arrived now, without waiting for the socket's next event: for a client that
    /// must know, before reusing an idle connection, whether the peer closed it meanwhile.
    public func readNow() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard phase == .established else { return }
        receive()
    }

    /// The one deadline: `deadline` is delivered when `time` passes (`.distantFuture`: never).
    /// Setting it again replaces it.
    public func setDeadline(_ time: DispatchTime) {
        dispatchPrecondition(condition: .onQueue(queue))
        timer?.schedule(deadline: time)
    }

    /// Closes the connection; no event follows. Once established, the write side is shut first
    /// (close_notify under TLS, best effort).
    public func close() {
        dispatchPrecondition(condition: .onQueue(queue))
        let previous = phase
        guard previous != .closed else { return }
        phase = .closed  // first: nothing below may fail (and close) again
        if previous == .established, channel?.isClosed == false { transport?.shutdownWrite() }
        timer?.cancel()
        timer = nil
        channel?.close()
        channel = nil
        transport = nil
        output = []
        outputOffset = 0
        onEvent = nil
    }

    // MARK: Events

    func readable() {
        dispatchPrecondition(condition: .onQueue(queue))
        switch phase {
        case .handshaking, .established: receive()
        default: break
        }
    }

    func writable() {
        dispatchPrecondition(condition: .onQueue(queue))
        switch phase {
        case .connecting: connectFinished()
        // A TLS transport sends its waiting handshake records from `read`.
        case .handshaking: receive()
        case .established:
            if !isOutputFlushed { return flush() }
            channel?.setWriting(false)
            // Records a read produced (a key update answer) wait in the TLS transport.
            if (transport as? TLSTransport)?.hasPendingCiphertext == true { receive() }
        default: channel?.setWriting(false)
        }
    }

    func deadlinePassed() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard phase != .closed else { return }
        timer?.schedule(deadline: .distantFuture)
        emit(.deadline)
    }

    /// Reads what the transport has until it would block, handing each chunk to the client.
    /// While handshaking, the read drives the handshake; when it is done, the connection is
    /// established and reading goes on (plaintext may have come with the last flight).
    func receive() {
        while phase == .handshaking || phase == .established, let transport, let channel {
            let result = readBuffer.withUnsafeMutableBytes { transport.read(into: $0) }
            switch result {
            case .transferred(let count):
                if phase == .established { emit(.received(readBuffer[..<count])) }
            case .wouldBlock(let readiness):
                if phase == .handshaking && !transport.isHandshaking {
                    established()
                    continue
                }
                if readiness == .writable {
                    // A TLS read that must send first (handshake records, a key update answer).
                    channel.setWriting(true)
                } else if phase == .handshaking {
                    // Nothing to send until the peer's next flight: writability would spin.
                    channel.setWriting(false)
                } else if !isOutputFlushed && !channel.writing {
                    flush()  // a write that waited for input
                }
                return
            case .endOfStream:
                return inputEnded()
            case .failed(let code):
                return transportFailed(code, whileSending: false)
            }
        }
    }

    /// Writes what the transport takes now; waits for writability for the rest.
    func flush() {
        guard let channel, let transport, !channel.isClosed else { return }
        while outputOffset < output.count {
            let result = output.withUnsafeBytes { raw in
                transport.write(UnsafeRawBufferPointer(rebasing: raw[outputOffset...]))
            }
            switch result {
            case .transferred(let count):
                outputOffset += count
                sentByteCount += count
            case .wouldBlock(.writable):
                return channel.setWriting(true)
            case .wouldBlock(.readable):
                return  // a TLS write that needs input first: the next read retries
            case .endOfStream:
                return transportFailed(EPIPE, whileSending: true)
            case .failed(let code):
                return transportFailed(code, whileSending: true)
            }
        }
        output.removeAll(keepingCapacity: output.capacity <= 1 << 20)
        outputOffset = 0
        channel.setWriting(false)
    }

    // MARK: The end

    private func inputEnded() {
        guard phase == .established else {
            return fail(OutboundError(.handshake, "\(peer) closed the connection during the TLS handshake", endOfStream: true))
        }
        // Level-triggered: an ended input stays readable. The client closes, or writes on.
        channel?.setReading(false)
        emit(.inputEnded)
    }

    private func transportFailed(_ code: Int32, whileSending: Bool) {
        let handshaking = phase == .handshaking
        let tls = transport as? TLSTransport
        if let tls, let reason = tls.failureReason {
            let what = handshaking ? "TLS handshake with \(peer) failed" : "TLS error with \(peer)"
            return fail(OutboundError(
                handshaking ? .handshake : .io, "\(what): \(reason)", errno: code, tlsReason: reason, tlsError: tls.tlsFailure,
                whileSending: whileSending))
        }
        let doing = whileSending ? "sending to" : "reading from"
        fail(OutboundError(
            handshaking ? .handshake : .io, "error \(doing) \(peer): \(String(cString: strerror(code)))", errno: code,
            whileSending: whileSending))
    }

    /// Closes, then tells the client why: the last event it hears.
    func fail(_ error: OutboundError) {
        guard phase != .closed else { return }
        let handler = onEvent
        close()
        handler?(.failed(error))
    }

    func emit(_ event: OutboundEvent) {
        onEvent?(event)
    }
}
