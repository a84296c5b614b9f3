import Dispatch
internal import StoreRelayNet
import StoreRelaySupport

/// Reading requests and writing answers, in order.
extension HTTPConnection {
    /// Large enough for a whole notification (Apple's reach 18 KB) in one read.
    static let readChunkBytes = 64 * 1024
    static let continueLine = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)

    func handleReadable() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard phase != .closed, channel?.reading == true else { return }
        let result = withUnsafeTemporaryAllocation(byteCount: Self.readChunkBytes, alignment: 1) { buffer in
            let result = transport.read(into: buffer)
            if case .transferred(let count) = result, phase == .open {
                parser.feed(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
            }
            return result
        }
        switch result {
        case .transferred:
            break
        case .wouldBlock(.readable):
            return
        case .wouldBlock(.writable):
            readWantsWrite = true
            resumeWriting()
            return
        case .endOfStream:
            peerClosed = true
            if phase == .lingering || parser.hasPartialRequest { return closeNow() }
            acceptingRequests = false
            if nextAnswerSequence == nextRequestSequence && outputOffset == output.count { return closeNow() }
            if nextAnswerSequence == nextRequestSequence { closeWhenFlushed = true }
            else { closeAfterSequence = nextRequestSequence - 1 }
        case .failed:
            return closeNow()
        }
        if phase == .open { processRequests() }
        updateReadInterest()
        refreshTimer()
    }

    /// Takes every complete request the parser holds, as far as the pipeline allows.
    func processRequests() {
        while phase == .open && acceptingRequests && canTakeRequest {
            let event: HTTPParserEvent?
            do {
                event = try parser.next()
            } catch {
                logger.debug("rejected request", [("http.peer", remoteAddress), ("http.error", error.description)])
                answerAndClose(error.response)
                return
            }
            switch event {
            case nil:
                // Waiting on the peer: the read timeout runs from the request's first byte.
                if parser.hasPartialRequest {
                    if requestStartedAt == nil { requestStartedAt = .now() }
                } else {
                    requestStartedAt = nil
                }
                return
            case .continueExpected:
                if nextRequestSequence == nextAnswerSequence {
                    appendOutput(Self.continueLine)
                    flush()
                } else {
                    continueSequence = nextRequestSequence
                }
            case .request(var request):
                requestStartedAt = nil
                request.remoteAddress = remoteAddress
                let sequence = nextRequestSequence
                nextRequestSequence += 1
                if continueSequence == sequence { continueSequence = nil }
                if !request.keepAlive || draining {
                    acceptingRequests = false
                    closeAfterSequence = sequence
                }
                pendingAnswers[sequence] = PendingAnswer(isHead: request.isHead, version: request.version)
                let responder = HTTPResponder { [self] response in
                    queue.async { self.deliver(response, for: sequence) }
                }
                handler(request, responder)
            }
        }
        // Paused by the pipeline, not by the peer: no read timeout meanwhile.
        requestStartedAt = nil
    }

    /// Queues an error answer after those owed, and closes once it is out.
    func answerAndClose(_ response: HTTPResponse) {
        acceptingRequests = false
        requestStartedAt = nil
        let sequence = nextRequestSequence
        nextRequestSequence += 1
        closeAfterSequence = sequence
        pendingAnswers[sequence] = PendingAnswer(isHead: false, version: .http1_1)
        deliver(response, for: sequence)
    }

    /// Stores an answer and writes every answer whose turn has come.
    func deliver(_ response: HTTPResponse, for sequence: Int) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard phase == .open, let pending = pendingAnswers.removeValue(forKey: sequence) else { return }
        var bytes: [UInt8] = []
        response.serialize(
            into: &bytes, headRequest: pending.isHead, close: sequence == closeAfterSequence,
            requestVersion: pending.version)
        readyAnswers[sequence] = bytes
        while let ready = readyAnswers.removeValue(forKey: nextAnswerSequence) {
            appendOutput(ready)
            if nextAnswerSequence == closeAfterSequence { closeWhenFlushed = true }
            nextAnswerSequence += 1
            if continueSequence == nextAnswerSequence && !closeWhenFlushed {
                appendOutput(Self.continueLine)
                continueSequence = nil
            }
        }
        flush()
        // Answers going out may free room in the pipeline for requests already buffered.
        if phase == .open { processRequests() }
        updateReadInterest()
        refreshTimer()
    }

    /// Queues bytes; the write timeout counts from when output stopped being empty.
    func appendOutput(_ bytes: [UInt8]) {
        if outputOffset == output.count { lastWriteProgress = .now() }
        output.append(contentsOf: bytes)
    }

    func handleWritable() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard phase != .closed else { return }
        if readWantsWrite {
            readWantsWrite = false
            handleReadable()
        }
        flush()
        // `flush` only manages the write source while open; a lingering TLS connection that
        // waited to send its close_notify must not keep it resumed on an always-writable socket.
        if phase == .lingering && !readWantsWrite { channel?.setWriting(false) }
        updateReadInterest()
        refreshTimer()
    }

    /// Writes as much output as the socket takes; waits for writability for the rest.
    func flush() {
        guard phase == .open else { return }
        while outputOffset < output.count {
            let result = output.withUnsafeBytes { transport.write(UnsafeRawBufferPointer(rebasing: $0[outputOffset...])) }
            switch result {
            case .transferred(let count):
                outputOffset += count
                lastWriteProgress = .now()
            case .wouldBlock:
                resumeWriting()
                return
            case .endOfStream, .failed:
                return closeNow()
            }
        }
        output.removeAll(keepingCapacity: output.capacity <= 64 * 1024)
        outputOffset = 0
        if !readWantsWrite { channel?.setWriting(false) }
        if closeWhenFlushed {
            startLingering()
        } else if nextAnswerSequence == nextRequestSequence {
            idleSince = .now()
        }
    }

    func resumeWriting() {
        channel?.setWriting(true)
    }

    /// Half-closes after the final answer and drains input until the peer closes.
    func startLingering() {
        guard phase == .open else { return }
        if peerClosed { return closeNow() }
        phase = .lingering
        transport.shutdownWrite()
        lingerDeadline = DispatchTime.now().advanced(by: configuration.lingerTimeout)
        parser = HTTPRequestParser(limits: configuration.parserLimits)
    }
}

extension DispatchTime {
    func advanced(by duration: Duration) -> DispatchTime {
        DispatchTime(uptimeNanoseconds: uptimeNanoseconds &+ duration.nanoseconds)
    }
}
