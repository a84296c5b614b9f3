import Dispatch

/// Life in the pool: idle timeout, noticing the server's close, and reuse (all on `queue`).
extension ClientConnection {
    /// Parks the connection in the pool and arms its idle timer.
    func becomeIdle() {
        state = .idle
        wasReused = true
        idleToken += 1
        let token = idleToken
        guard client.checkin(self) else { return close() }
        queue.asyncAfter(deadline: .now() + client.configuration.idleTimeout.dispatchInterval) { [self] in
            if state == .idle && idleToken == token { closeIdle() }
        }
    }

    /// Takes the connection out of the pool for good and closes it.
    func closeIdle() {
        dispatchPrecondition(condition: .onQueue(queue))
        client.pool.remove(self)
        close()
    }

    /// Carries `task` on this pooled connection, or on a fresh one when this one turned out
    /// to be closed by the server while it waited.
    func reuse(for task: RequestTask) {
        dispatchPrecondition(condition: .onQueue(queue))
        if state == .idle { checkIdle() }
        guard state == .idle else { return client.startOnFreshConnection(task) }
        guard task.attach(self) else {
            if !client.checkin(self) { close() }
            return
        }
        self.task = task
        idleToken += 1
        startExchange()
    }

    /// Reads whatever arrived on an idle connection: nothing (still good), a TLS session
    /// ticket (consumed by the transport: still good), or anything else — end of stream, an
    /// error, stray bytes — which means the connection cannot carry another request.
    func checkIdle() {
        guard let transport else { return closeIdle() }
        let result = readBuffer.withUnsafeMutableBytes { transport.read(into: $0) }
        if case .wouldBlock = result { return }
        closeIdle()
    }
}
