import Dispatch

/// The handshake, read, idle, write and linger deadlines, all served by one timer per connection.
extension HTTPConnection {
    /// Makes sure the timer fires no later than the earliest deadline that applies now.
    ///
    /// Lazily: rescheduling a Dispatch timer wakes the manager thread, and most events only
    /// push deadlines later (a request finished, output progressed). So the timer is only
    /// moved earlier here; when it fires early, `handleTimer` finds nothing due and
    /// schedules the real deadline then.
    func refreshTimer() {
        guard phase != .closed else { return }
        let deadline = nextDeadline() ?? .distantFuture
        guard deadline < scheduledDeadline else { return }
        scheduledDeadline = deadline
        timer?.schedule(deadline: deadline)
    }

    private var isIdle: Bool {
        acceptingRequests && nextAnswerSequence == nextRequestSequence && !parser.hasPartialRequest
            && outputOffset == output.count
    }

    /// A TLS handshake gets the read timeout: it is the start of the first request, and a
    /// client stalling it must not hold the connection for the longer idle timeout.
    private var handshakeDeadline: DispatchTime { openedAt.advanced(by: configuration.readTimeout) }

    private func nextDeadline() -> DispatchTime? {
        if phase == .lingering { return lingerDeadline }
        if transport.isHandshaking { return handshakeDeadline }
        var deadlines: [DispatchTime] = []
        if let started = requestStartedAt, acceptingRequests {
            deadlines.append(started.advanced(by: configuration.readTimeout))
        }
        if outputOffset < output.count {
            deadlines.append(lastWriteProgress.advanced(by: configuration.writeTimeout))
        }
        if isIdle {
            deadlines.append(idleSince.advanced(by: configuration.idleTimeout))
        }
        return deadlines.min()
    }

    func handleTimer() {
        dispatchPrecondition(condition: .onQueue(queue))
        scheduledDeadline = .distantFuture
        let now = DispatchTime.now()
        switch phase {
        case .closed:
            return
        case .lingering:
            if now >= lingerDeadline { return closeNow() }
        case .open:
            if transport.isHandshaking {
                guard now < handshakeDeadline else {
                    logger.debug("TLS handshake timeout", [("http.peer", remoteAddress)])
                    return closeNow()
                }
                break
            }
            if outputOffset < output.count && now >= lastWriteProgress.advanced(by: configuration.writeTimeout) {
                logger.debug("write timeout", [("http.peer", remoteAddress)])
                return closeNow()
            }
            if let started = requestStartedAt, acceptingRequests, now >= started.advanced(by: configuration.readTimeout) {
                logger.debug("read timeout", [("http.peer", remoteAddress)])
                answerAndClose(.error(.timeout))
                return
            }
            if isIdle && now >= idleSince.advanced(by: configuration.idleTimeout) {
                return closeNow()
            }
        }
        refreshTimer()
    }
}
