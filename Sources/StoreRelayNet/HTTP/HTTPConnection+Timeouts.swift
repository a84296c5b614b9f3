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
        guard machine.state != .closed else { return }
        publishIdleness()
        let deadline = nextDeadline() ?? .distantFuture
        guard deadline < times.timerDeadline else { return }
        times.timerDeadline = deadline
        timer?.schedule(deadline: deadline)
    }

    var isIdle: Bool {
        machine.isTakingRequests && machine.answers.allAnswered && !parser.hasPartialRequest && output.isFlushed
    }

    /// Tells the server whether (and since when) this connection is idle.
    private func publishIdleness() {
        let mark = isIdle ? times.idleSince : nil
        guard mark != times.publishedIdleSince else { return }
        times.publishedIdleSince = mark
        idleMark.withLock { $0 = mark }
    }

    /// A TLS handshake gets the read timeout: it is the start of the first request, and a
    /// client stalling it must not hold the connection for the longer idle timeout.
    private var handshakeDeadline: DispatchTime { times.opened.advanced(by: configuration.readTimeout) }

    private var readDeadline: DispatchTime? {
        guard machine.isTakingRequests, let started = times.requestStarted else { return nil }
        return started.advanced(by: configuration.readTimeout)
    }

    private var writeDeadline: DispatchTime? {
        output.isFlushed ? nil : times.lastWriteProgress.advanced(by: configuration.writeTimeout)
    }

    private var idleDeadline: DispatchTime? {
        guard isIdle else { return nil }
        let limit = times.receivedRequest ? configuration.idleTimeout : min(configuration.idleTimeout, configuration.readTimeout)
        return times.idleSince.advanced(by: limit)
    }

    private func nextDeadline() -> DispatchTime? {
        if case .lingering(let until) = machine.state { return until }
        if transport.isHandshaking { return handshakeDeadline }
        return [readDeadline, writeDeadline, idleDeadline].compactMap { $0 }.min()
    }

    func handleTimer() {
        dispatchPrecondition(condition: .onQueue(queue))
        times.timerDeadline = .distantFuture
        let now = DispatchTime.now()
        switch machine.state {
        case .closed:
            return
        case .lingering(let until):
            if now >= until { return closeNow() }
        case .serving, .finishing, .flushingFinal:
            if transport.isHandshaking {
                guard now < handshakeDeadline else {
                    logger.debug("TLS handshake timeout", [("http.peer", remoteAddress)])
                    return closeNow()
                }
                break
            }
            if let deadline = writeDeadline, now >= deadline {
                logger.debug("write timeout", [("http.peer", remoteAddress)])
                return closeNow()
            }
            if let deadline = readDeadline, now >= deadline {
                logger.debug("read timeout", [("http.peer", remoteAddress)])
                answerAndClose(.error(.timeout))
                return
            }
            if let deadline = idleDeadline, now >= deadline {
                return closeNow()
            }
        }
        refreshTimer()
    }
}
