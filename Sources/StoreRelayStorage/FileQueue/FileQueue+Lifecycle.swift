import Dispatch

/// Shutdown and age-based rotation.
extension FileQueue {
    /// Stops accepting appends (later ones fail with `.closed`), lets those already
    /// accepted complete, closes the open segment (fsync, rename, directory fsync), waits for
    /// pending compressions, then calls `completion` on the callback queue. A failure to
    /// close the segment is reported; the segment is then closed by recovery at next open.
    public func close(completion: @escaping @Sendable (Result<Void, StorageError>) -> Void) {
        let finished: Result<Void, StorageError>? = state.withLock { s in
            switch s.lifecycle {
            case .open: s.lifecycle = .closing(waiters: [completion])
            case .closing(let waiters): s.lifecycle = .closing(waiters: waiters + [completion])
            case .closed(let result): return result
            }
            return nil
        }
        if let finished {
            callbackQueue.async { completion(finished) }
        } else {
            closeIfDrained()
        }
    }

    /// `close(completion:)` for async callers.
    public func close() async throws(StorageError) {
        let result = await withCheckedContinuation { continuation in
            close { continuation.resume(returning: $0) }
        }
        try result.get()
    }

    /// Once closing and no batch is pending or in flight, closes the segment.
    func closeIfDrained() {
        let start = state.withLock { s in
            guard case .closing = s.lifecycle, !s.writerBusy, s.pending.isEmpty, !s.shutdownStarted else { return false }
            s.shutdownStarted = true
            return true
        }
        guard start else { return }
        ageTimer.withLock { timer in
            timer?.cancel()
            timer = nil
        }
        writer.queue.async {
            let report = self.writer.access { $0.closeSegment() }
            // The compression queue is serial: this runs after every compression queued so
            // far, including the one for the segment just closed.
            self.compressionQueue.async { self.finishClosing(report) }
        }
    }

    private func finishClosing(_ report: WriteReport) {
        let result: Result<Void, StorageError> = report.error.map { .failure($0) } ?? .success(())
        let waiters: [@Sendable (Result<Void, StorageError>) -> Void] = state.withLock { s in
            apply(report, to: &s)
            guard case .closing(let waiters) = s.lifecycle else { return [] }
            s.lifecycle = .closed(result)
            return waiters
        }
        logger.info("file queue closed", [("filequeue.directory", directory)])
        callbackQueue.async { for waiter in waiters { waiter(result) } }
    }

    /// Starts the timer that closes a segment once it is older than `rotateAge`. A zero
    /// `rotateAge` disables age rotation.
    func startAgeTimer() {
        guard options.rotateAgeMilliseconds > 0 else { return }
        let interval = DispatchTimeInterval.milliseconds(Int(max(1, options.ageCheckInterval.wholeMilliseconds)))
        let timer = DispatchSource.makeTimerSource(queue: callbackQueue)
        timer.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(10))
        timer.setEventHandler { [weak self] in self?.checkAge() }
        timer.resume()
        ageTimer.withLock { $0 = timer }
    }

    /// One timer tick: asks the writer to close the open segment if it is old enough, behind
    /// any batch already queued. `done` runs once the check is over (or at once when none
    /// was needed).
    func checkAge(done: (@Sendable () -> Void)? = nil) {
        let go = state.withLock { s in
            guard s.acceptsAppends, !s.ageCheckQueued, s.openSequence != nil else { return false }
            s.ageCheckQueued = true
            return true
        }
        guard go else { done?(); return }
        writer.queue.async {
            let report = self.writer.access { $0.rotateIfOld(now: self.options.clock.now()) }
            self.state.withLock { s in
                self.apply(report, to: &s)
                s.ageCheckQueued = false
            }
            if let error = report.error {
                self.logger.error("file queue could not close an old segment", [("error", error.message)])
            }
            done?()
        }
    }
}
