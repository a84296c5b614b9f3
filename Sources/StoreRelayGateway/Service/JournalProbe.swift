import Dispatch
import StoreRelayStorage

/// While the journal cannot write, tries a tiny real write every few seconds, so readiness
/// recovers once space is back even when no notification arrives to try (a load balancer
/// that stops sending on a failed `/readyz` would otherwise wait forever).
final class JournalProbe: @unchecked Sendable {
    // Invariant: set once in init; DispatchSource's resume/cancel are thread-safe.
    private let timer: any DispatchSourceTimer

    init(journal: Journal, interval: DispatchTimeInterval = .seconds(5)) {
        timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "storerelay.journal-probe"))
        timer.schedule(deadline: .now() + interval, repeating: interval)
        timer.setEventHandler { [weak journal] in
            guard let journal, !journal.isWritable else { return }
            // A progress record for no event: replay ignores it.
            journal.appendProgress(id: "storerelay-readiness-probe", payload: []) { _ in }
        }
        timer.resume()
    }

    func stop() { timer.cancel() }
}
