import Dispatch
import StoreRelayCore

/// One `execute` call: its request, its overall deadline, and the promise to call the
/// completion exactly once, whichever of the connection, the timer or `shutdown` gets there first.
///
/// `Sendable` without `unchecked`: constants plus a `Locked` state.
final class RequestTask: Sendable {
    let request: HTTPClientRequest
    /// The request's bytes, serialized (and validated) once before any connection is used.
    let wire: [UInt8]
    private let completion: @Sendable (Result<HTTPClientResponse, HTTPClientError>) -> Void
    private let completionQueue: DispatchQueue

    private struct State {
        var finished = false
        /// The connection currently carrying the request, told to stop on timeout or shutdown.
        var connection: ClientConnection?
        var timer: (any DispatchSourceTimer)?
    }
    private let state = Locked(State())

    init(
        request: HTTPClientRequest, wire: [UInt8], completionQueue: DispatchQueue,
        completion: @escaping @Sendable (Result<HTTPClientResponse, HTTPClientError>) -> Void
    ) {
        self.request = request
        self.wire = wire
        self.completionQueue = completionQueue
        self.completion = completion
    }

    var isFinished: Bool { state.withLock { $0.finished } }

    /// Fails the task with `.timeout` after `timeout`, unless it finished before.
    ///
    /// A cancellable timer source rather than `asyncAfter`: a cancelled work item would stay
    /// queued, holding this task (its request bytes and the caller's completion) until the
    /// deadline; a cancelled source lets go at once.
    func startTimer(_ timeout: Duration, on queue: DispatchQueue, onExpiry: @escaping @Sendable () -> Void) {
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + timeout.dispatchInterval)
        timer.setEventHandler { [weak self] in
            guard let self else { return }
            if finish(.failure(HTTPClientError(.timeout, "no complete response within \(timeout)"))) { onExpiry() }
        }
        let alreadyFinished = state.withLock { state -> Bool in
            if !state.finished { state.timer = timer }
            return state.finished
        }
        // A source must be resumed before its last release, even one that is not needed.
        timer.resume()
        if alreadyFinished { timer.cancel() }
    }

    /// Records which connection carries the request now; false when it has already finished.
    func attach(_ connection: ClientConnection) -> Bool {
        state.withLock { state in
            guard !state.finished else { return false }
            state.connection = connection
            return true
        }
    }

    /// Completes the task unless it already was; returns whether this call did it. After an
    /// early finish (timeout, shutdown), the attached connection is told to abandon the task.
    @discardableResult
    func finish(_ result: Result<HTTPClientResponse, HTTPClientError>) -> Bool {
        let taken: (timer: (any DispatchSourceTimer)?, connection: ClientConnection?)? = state.withLock { state in
            guard !state.finished else { return nil }
            state.finished = true
            defer { state.timer = nil; state.connection = nil }
            return (state.timer, state.connection)
        }
        guard let taken else { return false }
        taken.timer?.cancel()
        if case .failure = result, let connection = taken.connection {
            connection.queue.async { connection.abandon(self) }
        }
        let completion = self.completion
        completionQueue.async { completion(result) }
        return true
    }
}
