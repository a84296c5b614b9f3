import Dispatch

/// The handshake, header, body rate, read, idle, write and linger deadlines, all served by one
/// timer per connection; and the standing the server sheds by, which follows the same clocks.
extension HTTPConnection {
    /// Makes sure the timer fires no later than the earliest deadline that applies now.
    ///
    /// Lazily: rescheduling a Dispatch timer wakes the manager thread, and most events only
    /// push deadlines later (a request finished, output progressed). So the timer is only
    /// moved earlier here; when it fires early, `handleTimer` finds nothing due and
    /// schedules the real deadline then.
    func refreshTimer() {
        guard machine.state != .closed else { return }
        publishStanding()
        let deadline = nextDeadline() ?? .distantFuture
        guard deadline < times.timerDeadline else { return }
        times.timerDeadline = deadline
        timer?.schedule(deadline: deadline)
    }

    var isIdle: Bool {
        machine.isTakingRequests && machine.answers.allAnswered && !parser.hasPartialRequest && output.isFlushed
    }

    /// Where this connection stands for shedding (see `ConnectionStanding`); nil while it owes
    /// an answer or has output pending: a request that is whole is never shed, nor its answer.
    var currentStanding: ConnectionStanding? {
        switch machine.state {
        case .closed:
            return nil
        case .lingering:
            // Answered already: what it still sends is dropped. It goes before anything newer.
            return ConnectionStanding(isIdle: true, earnedUntil: times.opened)
        case .serving, .finishing, .flushingFinal:
            if isIdle { return ConnectionStanding(isIdle: true, earnedUntil: times.idleSince) }
            guard machine.isTakingRequests, machine.answers.allAnswered, output.isFlushed,
                  let started = times.requestStarted else { return nil }
            return .receiving(since: times.receivedRequest ? started : times.opened, bytes: times.requestBytes,
                              creditRate: configuration.minBodyRate)
        }
    }

    /// Tells the server where this connection stands.
    private func publishStanding() {
        let current = currentStanding
        guard current != times.publishedStanding else { return }
        times.publishedStanding = current
        standing.withLock { $0 = current }
    }

    /// The head of a connection's first request counts from the accept, so the TLS handshake
    /// before it gets the header timeout too: a client stalling it must not hold the
    /// connection for the longer idle timeout.
    private var handshakeDeadline: DispatchTime {
        times.opened.advanced(by: min(configuration.headerTimeout, configuration.readTimeout))
    }

    private var readDeadline: DispatchTime? {
        guard machine.isTakingRequests, let started = times.requestStarted else { return nil }
        return started.advanced(by: configuration.readTimeout)
    }

    /// A head is due `headerTimeout` after the accept (first request) or its first byte.
    private var headDeadline: DispatchTime? {
        guard machine.isTakingRequests, parser.hasPartialHead, let started = times.requestStarted else { return nil }
        return (times.receivedRequest ? started : times.opened).advanced(by: configuration.headerTimeout)
    }

    /// The body must keep up with `minBodyRate` after `bodyRateGrace`: each byte received
    /// moves this deadline later by 1/`minBodyRate` s.
    private var bodyRateDeadline: DispatchTime? {
        guard configuration.minBodyRate > 0, machine.isTakingRequests, times.requestStarted != nil,
              let started = times.bodyStarted else { return nil }
        return started.advanced(by: configuration.bodyRateGrace)
            .advanced(byTransferOf: parser.receivedBodyBytes, atRate: configuration.minBodyRate)
    }

    private var writeDeadline: DispatchTime? {
        output.isFlushed ? nil : times.lastWriteProgress.advanced(by: configuration.writeTimeout)
    }

    private var idleDeadline: DispatchTime? {
        guard isIdle else { return nil }
        let limit = times.receivedRequest
            ? configuration.idleTimeout
            : min(configuration.idleTimeout, configuration.readTimeout, configuration.headerTimeout)
        return times.idleSince.advanced(by: limit)
    }

    private func nextDeadline() -> DispatchTime? {
        if case .lingering(let until) = machine.state { return until }
        if transport.isHandshaking { return handshakeDeadline }
        return [readDeadline, headDeadline, bodyRateDeadline, writeDeadline, idleDeadline].compactMap { $0 }.min()
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
            if let deadline = headDeadline, now >= deadline {
                logger.debug("header timeout", [("http.peer", remoteAddress)])
                answerAndClose(.error(.timeout))
                return
            }
            if let deadline = bodyRateDeadline, now >= deadline {
                logger.debug("body below the minimum rate", [
                    ("http.peer", remoteAddress), ("http.body_bytes", parser.receivedBodyBytes),
                ])
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
