import StoreRelayCore

/// The spans waiting for export, bounded: recording is a few lock operations and never
/// waits, so a slow or dead collector costs spans, not acceptance time. A span that finds
/// the buffer full is dropped and counted.
package final class SpanBuffer: Sendable {
    private struct State {
        var spans: [TraceSpan] = []
        /// An export is in flight: one at a time, so a slow collector holds one batch, not many.
        var exporting = false
    }

    package let capacity: Int
    private let state = Locked(State())

    package init(capacity: Int) {
        precondition(capacity > 0)
        self.capacity = capacity
    }

    /// Keeps `span`; false when the buffer was full and it was dropped. `count` is what the
    /// buffer holds afterwards, for the caller's decision to export early.
    package func append(_ span: TraceSpan) -> (kept: Bool, count: Int) {
        state.withLock { state in
            guard state.spans.count < capacity else { return (false, state.spans.count) }
            state.spans.append(span)
            return (true, state.spans.count)
        }
    }

    /// Spans waiting right now.
    package var count: Int { state.withLock { $0.spans.count } }

    /// The oldest `limit` spans, taken out for one export; nil while another export is in
    /// flight or nothing waits. Call `exportFinished()` when the batch has been handled.
    package func takeBatch(limit: Int) -> [TraceSpan]? {
        state.withLock { state in
            guard !state.exporting, !state.spans.isEmpty else { return nil }
            state.exporting = true
            let batch = Array(state.spans.prefix(limit))
            state.spans.removeFirst(batch.count)
            return batch
        }
    }

    package func exportFinished() {
        state.withLock { $0.exporting = false }
    }
}
