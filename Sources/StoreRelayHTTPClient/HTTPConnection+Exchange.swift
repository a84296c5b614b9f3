import Dispatch
internal import StoreRelayTLS
internal import StoreRelaySupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Sending a request, reading its response, and the end of an exchange (all on `queue`).
extension HTTPConnection {
    /// Serializes the current task's request onto the wire and starts waiting for the answer.
    func startExchange() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let task else { return close() }
        state = .exchanging
        sentAny = false
        sourcesMissedEvents = false
        let configuration = client.configuration
        if configuration.missesReadEventsForTesting { channel?.setReading(false) }
        parser = HTTPResponseParser(
            limits: .init(maxHeaderBytes: configuration.maxResponseHeadSize, maxBodyBytes: configuration.maxResponseBodySize),
            isHeadRequest: task.request.isHead)
        if let tls {
            do {
                try tls.writePlaintext(task.wire)
            } catch {
                return fail(HTTPClientError(.io, "TLS write to \(origin) failed: \(error.reason)", tlsError: error))
            }
            queueCiphertext()
        } else {
            outbound.append(contentsOf: task.wire)
            flush()
        }
    }

    /// Moves the TLS engine's output to the socket.
    func queueCiphertext() {
        guard let tls, tls.hasPendingCiphertext else { return }
        outbound.append(contentsOf: tls.takeCiphertext())
        flush()
    }

    /// Writes what the socket takes now; waits for writability for the rest.
    func flush() {
        guard let channel, !channel.isClosed else { return }
        while outboundOffset < outbound.count {
            let count = outbound.withUnsafeBytes { raw in
                send(channel.fd, raw.baseAddress! + outboundOffset, raw.count - outboundOffset, Int32(MSG_NOSIGNAL))
            }
            if count > 0 {
                outboundOffset += count
                if state == .exchanging { sentAny = true }
                continue
            }
            let code = errno
            if code == EINTR { continue }
            if state == .closed { return }  // a farewell close_notify that did not fit
            if code == EAGAIN || code == EWOULDBLOCK { return channel.setWriting(true) }
            return transportFailed(code, while: "sending to")
        }
        outbound.removeAll(keepingCapacity: true)
        outboundOffset = 0
        channel.setWriting(false)
    }

    func writable() {
        dispatchPrecondition(condition: .onQueue(queue))
        switch state {
        case .connecting: connectFinished()
        case .handshaking, .exchanging: flush()
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

    /// Reads once (the source fires again while more is waiting) and feeds the bytes on.
    private func receive() {
        guard let channel else { return }
        let count = readBuffer.withUnsafeMutableBytes { recv(channel.fd, $0.baseAddress, $0.count, 0) }
        if count < 0 {
            let code = errno
            if code == EAGAIN || code == EWOULDBLOCK || code == EINTR { return }
            return transportFailed(code, while: "reading from")
        }
        if count == 0 { return endOfStream() }
        let bytes = readBuffer[..<count]
        guard let tls else { return deliver(bytes) }
        tls.receiveCiphertext(bytes)
        if state == .handshaking { return advanceHandshake() }
        var plaintext: [UInt8] = []
        let status: TLSConnection.ReadStatus
        do {
            status = try tls.readPlaintext(into: &plaintext)
        } catch {
            return fail(HTTPClientError(.io, "TLS read from \(origin) failed: \(error.reason)", tlsError: error))
        }
        queueCiphertext()  // post-handshake messages may need an answer (key update)
        deliver(plaintext)
        if status == .closed && state == .exchanging { endOfStream() }
    }

    private func deliver(_ bytes: some Collection<UInt8>) {
        guard state == .exchanging, !bytes.isEmpty else { return }
        do {
            if case .complete(let response, let reusable) = try parser.consume(bytes) {
                finishExchange(response, reusable: reusable && outboundOffset == outbound.count)
            }
        } catch {
            fail(error)
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
            fail(HTTPClientError(error.code, "\(origin): \(error.message)"))
        }
    }

    private func transportFailed(_ code: Int32, while doing: String) {
        if state == .exchanging && wasReused && !sentAny { return retryOnFreshConnection() }
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
        rescuedExchanges = sourcesMissedEvents ? rescuedExchanges + 1 : 0
        if reusable && rescuedExchanges < 2 {
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
        state = .closed  // first: a failing flush below must not fail (and close) again
        stopBackstop()
        if let tls, previous == .idle || previous == .exchanging {
            tls.close()  // close_notify, best effort
            outbound.append(contentsOf: tls.takeCiphertext())
            flush()
        }
        channel?.close()
        channel = nil
        tls = nil
    }
}
