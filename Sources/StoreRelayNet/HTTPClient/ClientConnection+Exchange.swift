import Dispatch
import StoreRelayCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Sending a request, reading its response, and the end of an exchange (all on `queue`).
extension ClientConnection {
    /// Serializes the current task's request onto the wire and starts waiting for the answer.
    func startExchange() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let task else { return close() }
        state = .exchanging
        sentAny = false
        let configuration = client.configuration
        parser = HTTPResponseParser(
            limits: .init(maxHeaderBytes: configuration.maxResponseHeadSize, maxBodyBytes: configuration.maxResponseBodySize),
            isHeadRequest: task.request.isHead)
        outbound = task.wire
        outboundOffset = 0
        flush()
    }

    /// Writes what the transport takes now; waits for writability for the rest.
    func flush() {
        guard let channel, let transport, !channel.isClosed else { return }
        while outboundOffset < outbound.count {
            let result = outbound.withUnsafeBytes { raw in
                transport.write(UnsafeRawBufferPointer(rebasing: raw[outboundOffset...]))
            }
            switch result {
            case .transferred(let count):
                outboundOffset += count
                sentAny = true
            case .wouldBlock(.writable):
                return channel.setWriting(true)
            case .wouldBlock(.readable):
                return  // a TLS write that needs input first: the next read event retries
            case .endOfStream:
                return transportFailed(EPIPE, while: "sending to")
            case .failed(let code):
                return transportFailed(code, while: "sending to")
            }
        }
        outbound = []
        outboundOffset = 0
        channel.setWriting(false)
    }

    func writable() {
        dispatchPrecondition(condition: .onQueue(queue))
        switch state {
        case .connecting: connectFinished()
        // A TLS transport sends its waiting handshake records from `read`.
        case .handshaking: receive()
        case .exchanging: outboundOffset < outbound.count ? flush() : channel?.setWriting(false)
        default: channel?.setWriting(false)
        }
    }

    func readable() {
        dispatchPrecondition(condition: .onQueue(queue))
        switch state {
        case .idle: checkIdle()
        case .handshaking, .exchanging: receive()
        default: break
        }
    }

    /// Reads what the transport has (the source fires again while more is waiting) and feeds
    /// it on. While handshaking, the read drives the handshake; when it is done, the request
    /// goes out.
    func receive() {
        guard let transport, let channel else { return }
        while state == .handshaking || state == .exchanging {
            let result = readBuffer.withUnsafeMutableBytes { transport.read(into: $0) }
            switch result {
            case .transferred(let count):
                deliver(readBuffer[..<count])
            case .wouldBlock(let readiness):
                if state == .handshaking && !transport.isHandshaking { return startExchange() }
                // A TLS read that must send first (handshake records, a key update answer).
                if readiness == .writable { channel.setWriting(true) }
                return
            case .endOfStream:
                return endOfStream()
            case .failed(let code):
                return transportFailed(code, while: "reading from")
            }
        }
    }

    private func deliver(_ bytes: ArraySlice<UInt8>) {
        guard state == .exchanging, !bytes.isEmpty else { return }
        do {
            if case .complete(let response, let reusable) = try parser.consume(bytes) {
                finishExchange(response, reusable: reusable && outboundOffset == outbound.count)
            }
        } catch {
            fail(HTTPClientError(response: error))
        }
    }

    /// The peer closed: the end of a read-until-close body, a stale keep-alive connection, or
    /// a response cut short.
    private func endOfStream() {
        if state == .handshaking {
            return fail(HTTPClientError(.tls, "\(origin) closed the connection during the TLS handshake"))
        }
        guard state == .exchanging else { return close() }
        if wasReused && !sentAny && !parser.hasReceivedBytes { return retryOnFreshConnection() }
        do {
            finishExchange(try parser.endOfStream(), reusable: false)
        } catch {
            let failure = HTTPClientError(response: error)
            fail(HTTPClientError(failure.code, "\(origin): \(failure.message)"))
        }
    }

    private func transportFailed(_ code: Int32, while doing: String) {
        if state == .exchanging && wasReused && !sentAny { return retryOnFreshConnection() }
        if let tls = transport as? TLSTransport, let reason = tls.failureReason {
            let what = state == .handshaking ? "TLS handshake with \(origin) failed" : "TLS error with \(origin)"
            return fail(HTTPClientError(.tls, "\(what): \(reason)", tlsError: tls.tlsFailure))
        }
        let reason = String(cString: strerror(code))
        let kind: HTTPClientError.Code = state == .handshaking ? .tls : .io
        fail(HTTPClientError(kind, "error \(doing) \(origin): \(reason)", errno: code))
    }

    /// Nothing of the request left: the server had closed this pooled connection. Once only,
    /// since a fresh connection is never "reused".
    private func retryOnFreshConnection() {
        guard let task else { return close() }
        client.configuration.logger.debug("pooled connection was closed by the server; retrying on a fresh one", [
            ("http.origin", origin),
        ])
        self.task = nil
        close()
        client.startOnFreshConnection(task)
    }

    private func finishExchange(_ response: HTTPClientResponse, reusable: Bool) {
        guard let task else { return close() }
        self.task = nil
        if reusable {
            becomeIdle()
        } else {
            close()
        }
        task.finish(.success(response))
    }

    func fail(_ error: HTTPClientError) {
        client.configuration.logger.debug("HTTP request failed", [
            ("http.origin", origin), ("error.code", error.code.description), ("error.message", error.message),
        ])
        let task = self.task
        self.task = nil
        close()
        task?.finish(.failure(error))
    }

    /// The task finished without us (timeout, shutdown): drop the connection if still on it.
    func abandon(_ task: RequestTask) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard self.task === task else { return }
        self.task = nil
        close()
    }

    func close() {
        dispatchPrecondition(condition: .onQueue(queue))
        let previous = state
        if previous == .closed { return }
        state = .closed  // first: nothing below may fail (and close) again
        if previous == .idle || previous == .exchanging {
            transport?.shutdownWrite()  // close_notify under TLS, best effort
        }
        channel?.close()
        channel = nil
        transport = nil
    }
}
