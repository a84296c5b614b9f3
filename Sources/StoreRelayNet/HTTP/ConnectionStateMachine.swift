import Dispatch

/// The rules of one server connection's life, without I/O: which requests are taken, which
/// answer is the last, when to close and when to linger. `HTTPConnection` feeds it events
/// (a request, an answer, the end of input, a drain, output flushed) and performs the action
/// it returns; swift-nio's `HTTPServerPipelineHandler` is the model. One `switch` per event
/// over an explicit state replaces the flags that used to say the same things piecemeal.
struct ConnectionStateMachine {
    enum State: Equatable {
        /// Reading requests and answering them. `lastRequestArriving`: a drain began while a
        /// request was arriving; that request is let finish and is the last.
        case serving(lastRequestArriving: Bool)
        /// No further request is read; the answer at place `last` in line ends the connection.
        case finishing(last: Int)
        /// The final answer is in the output: once it is flushed, the connection lingers.
        case flushingFinal
        /// Final answer sent and write side shut: input is read and discarded until the peer
        /// closes or `until`, so unread input does not turn our close into a reset.
        case lingering(until: DispatchTime)
        case closed
    }

    /// What the connection must do after an event.
    enum Action: Equatable {
        case none
        case close
        /// Shut the write side and linger (`state` is `.lingering` already).
        case linger
    }

    private(set) var state = State.serving(lastRequestArriving: false)
    /// The peer ended its input (it may still read our answers).
    private(set) var peerClosed = false
    private(set) var answers = AnswerQueue()

    /// Requests are read and taken only while serving.
    var isTakingRequests: Bool {
        if case .serving = state { true } else { false }
    }

    /// Serving, finishing or flushing: answers may still be written.
    var isAnswering: Bool {
        switch state {
        case .serving, .finishing, .flushingFinal: true
        case .lingering, .closed: false
        }
    }

    var isLingering: Bool {
        if case .lingering = state { true } else { false }
    }

    /// A complete request arrived: its place in line. `Connection: close` (or a drain) makes
    /// it the last.
    mutating func requestReceived(_ request: AnswerQueue.Owed, keepAlive: Bool) -> Int {
        let sequence = answers.take(request)
        if case .serving(let lastRequestArriving) = state, !keepAlive || lastRequestArriving {
            state = .finishing(last: sequence)
        }
        return sequence
    }

    /// The request arriving is refused (malformed, too slow): its error answer is the last.
    mutating func requestFailed() -> Int {
        let sequence = answers.take(AnswerQueue.Owed(isHead: false, version: .http1_1))
        state = .finishing(last: sequence)
        return sequence
    }

    /// A request asked for `100 Continue`: whether to send it now (else it follows the
    /// answers before it).
    mutating func continueNow() -> Bool { answers.continueNow() }

    /// Whether the answer at `sequence` ends the connection (it then says `Connection: close`).
    func isFinal(_ sequence: Int) -> Bool {
        if case .finishing(let last) = state { last == sequence } else { false }
    }

    /// What is known of the request at `sequence`, while its answer is owed and can be sent.
    func owedRequest(at sequence: Int) -> AnswerQueue.Owed? {
        isAnswering ? answers.request(at: sequence) : nil
    }

    /// Takes the serialized answer to `sequence`; returns the bytes now due on the wire, in
    /// request order (nil when that answer is not owed).
    mutating func answer(_ sequence: Int, bytes: [UInt8]) -> [UInt8]? {
        guard isAnswering else { return nil }
        let state = state
        let due = answers.answer(sequence, bytes: bytes) { sequence in
            if case .finishing(let last) = state { last == sequence } else { false }
        }
        if case .finishing(let last) = state, answers.nextAnswer > last { self.state = .flushingFinal }
        return due
    }

    /// Stop taking requests (graceful shutdown): the one arriving, if any, is let finish.
    mutating func drain(requestArriving: Bool, outputFlushed: Bool) -> Action {
        guard case .serving(false) = state else { return .none }
        if requestArriving {
            state = .serving(lastRequestArriving: true)
            return .none
        }
        return stopTakingRequests(outputFlushed: outputFlushed)
    }

    /// The peer ended its input. A request cut short, or input while lingering, closes at
    /// once; otherwise the answers owed are still sent.
    mutating func inputEnded(requestArriving: Bool, outputFlushed: Bool) -> Action {
        peerClosed = true
        if isLingering || requestArriving { return close() }
        return stopTakingRequests(outputFlushed: outputFlushed)
    }

    /// Everything queued reached the socket.
    mutating func outputFlushed(lingerUntil deadline: @autoclosure () -> DispatchTime) -> Action {
        guard state == .flushingFinal else { return .none }
        if peerClosed { return close() }
        state = .lingering(until: deadline())
        return .linger
    }

    mutating func close() -> Action {
        guard state != .closed else { return .none }
        state = .closed
        answers.removeAll()
        return .close
    }

    private mutating func stopTakingRequests(outputFlushed: Bool) -> Action {
        guard isTakingRequests else { return .none }
        guard answers.allAnswered else {
            state = .finishing(last: answers.lastTaken)
            return .none
        }
        if outputFlushed { return close() }
        state = .flushingFinal
        return .none
    }
}
