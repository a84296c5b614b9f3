import Dispatch
import StoreRelayStorage
import StoreRelayCore

/// While the journal cannot write, tries a tiny real write every few seconds, so readiness
/// recovers once space is back even when no notification arrives to try (a load balancer
/// that stops sending on a failed `/readyz` would otherwise wait forever).
final class JournalProbe: Sendable {
    private let timer = RepeatingTimer()

    init(journal: Journal, interval: Duration = .seconds(5)) {
        timer.start(after: interval, every: interval, on: DispatchQueue(label: "storerelay.journal-probe")) { [weak journal] in
            guard let journal, !journal.isWritable else { return }
            // A progress record for no event: replay ignores it.
            journal.appendProgress(id: "storerelay-readiness-probe", payload: []) { _ in }
        }
    }

    func stop() { timer.stop() }
}
