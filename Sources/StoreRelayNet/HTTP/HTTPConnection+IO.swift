import Dispatch
import StoreRelayCore

/// Reading requests and writing answers, in order.
extension HTTPConnection {
    /// Large enough for a whole notification (Apple's reach 18 KB) in one read.
    static let readChunkBytes = 64 * 1024

    func handleReadable() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard machine.state != .closed, channel?.reading == true else { return }
        let result = withUnsafeTemporaryAllocation(byteCount: Self.readChunkBytes, alignment: 1) { buffer in
            let result = transport.read(into: buffer)
            // While lingering, input is read only to be dropped.
            if case .transferred(let count) = result, machine.isAnswering {
                parser.feed(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
                times.requestBytes += count
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
            perform(machine.inputEnded(requestArriving: parser.hasPartialRequest, outputFlushed: output.isFlushed))
        case .failed:
            return closeNow()
        }
        processRequests()
        updateReadInterest()
        refreshTimer()
    }

    /// Takes every complete request the parser holds, as far as the pipeline allows.
    func processRequests() {
        while machine.isTakingRequests && canTakeRequest {
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
                // Waiting on the peer: the read timeout runs from the request's first byte,
                // the minimum body rate from the end of its head, once no earlier answer is
                // owed (a `100 Continue` the client waits for goes out only then).
                if parser.hasPartialRequest {
                    if times.requestStarted == nil { times.requestStarted = .now() }
                    if parser.isReceivingBody && times.bodyStarted == nil && machine.answers.allAnswered {
                        times.bodyStarted = .now()
                    }
                } else {
                    times.requestStarted = nil
                    times.bodyStarted = nil
                }
                return
            case .continueExpected:
                if machine.continueNow() {
                    appendOutput(AnswerQueue.continueLine)
                    flush()
                }
            case .request(var request):
                times.requestStarted = nil
                times.bodyStarted = nil
                // What is still buffered belongs to the next request (pipelining).
                times.requestBytes = parser.bufferedByteCount
                times.receivedRequest = true
                request.remoteAddress = remoteAddress
                request.remoteHost = peerHost
                let sequence = machine.requestReceived(
                    AnswerQueue.Owed(isHead: request.isHead, version: request.version), keepAlive: request.keepAlive)
                let responder = HTTPResponder { [self] response in
                    queue.async { self.deliver(response, for: sequence) }
                }
                handler(request, responder)
            }
        }
        // Paused by the pipeline, not by the peer: no read timeout meanwhile.
        times.requestStarted = nil
        times.bodyStarted = nil
    }

    /// Queues an error answer after those owed, and closes once it is out.
    func answerAndClose(_ response: HTTPResponse) {
        times.requestStarted = nil
        times.bodyStarted = nil
        deliver(response, for: machine.requestFailed())
    }

    /// Stores an answer and writes every answer whose turn has come.
    func deliver(_ response: HTTPResponse, for sequence: Int) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let request = machine.owedRequest(at: sequence) else { return }
        var bytes: [UInt8] = []
        response.serialize(
            into: &bytes, headRequest: request.isHead, close: machine.isFinal(sequence), requestVersion: request.version)
        if let due = machine.answer(sequence, bytes: bytes), !due.isEmpty { appendOutput(due) }
        flush()
        // Answers going out may free room in the pipeline for requests already buffered.
        processRequests()
        updateReadInterest()
        refreshTimer()
    }

    /// Queues bytes; the write timeout counts from when output stopped being empty.
    func appendOutput(_ bytes: [UInt8]) {
        if output.isFlushed { times.lastWriteProgress = .now() }
        output.append(bytes)
    }

    func handleWritable() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard machine.state != .closed else { return }
        if readWantsWrite {
            readWantsWrite = false
            handleReadable()
        }
        flush()
        // `flush` only manages the write source while answering; a lingering TLS connection
        // that waited to send its close_notify must not keep it resumed on an always-writable
        // socket.
        if machine.isLingering && !readWantsWrite { channel?.setWriting(false) }
        updateReadInterest()
        refreshTimer()
    }

    /// Writes as much output as the socket takes; waits for writability for the rest.
    func flush() {
        guard machine.isAnswering else { return }
        while !output.isFlushed {
            var result = TransportResult.transferred(0)
            output.write { pending in
                result = transport.write(pending)
                if case .transferred(let count) = result { return count }
                return 0
            }
            switch result {
            case .transferred:
                times.lastWriteProgress = .now()
            case .wouldBlock:
                resumeWriting()
                return
            case .endOfStream, .failed:
                return closeNow()
            }
        }
        if !readWantsWrite { channel?.setWriting(false) }
        let action = machine.outputFlushed(lingerUntil: DispatchTime.now().advanced(by: configuration.lingerTimeout))
        if action == .none && machine.answers.allAnswered { times.idleSince = .now() }
        perform(action)
    }

    func resumeWriting() {
        channel?.setWriting(true)
    }
}
