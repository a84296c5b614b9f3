import Dispatch
import StoreRelayDelivery
import StoreRelayCore
internal import CStoreRelayShims

/// Gives memory back to the system once a burst is over.
///
/// A backlog of deliveries holds every waiting notification in memory (tens of kilobytes
/// each); glibc keeps what was freed for reuse, so after a burst the gateway would stay at
/// its peak — hundreds of MiB — while idle. Each time the backlog drains to nothing, the free
/// pages of every arena are returned (`malloc_trim`): once per busy period, never while busy.
final class MemoryTrimmer: @unchecked Sendable {
    // Invariant: `edge` is touched only by the timer's handler, on its serial queue.
    private let timer = RepeatingTimer()
    private var edge = BusyPeriodEnd()

    init(delivery: DeliveryEngine, interval: Duration = .seconds(1)) {
        let queue = DispatchQueue(label: "storerelay.memory-trim")
        timer.start(after: interval, every: interval, leeway: .milliseconds(200), on: queue) { [weak self, weak delivery] in
            guard let self, let delivery else { return }
            if edge.ended(busy: delivery.unfinishedEvents > 0) { _ = storerelay_malloc_trim() }
        }
    }

    func stop() { timer.stop() }
}

/// Tells, from one sample of "busy?" after another, when a busy period has just ended.
struct BusyPeriodEnd {
    private var wasBusy = false

    mutating func ended(busy: Bool) -> Bool {
        defer { wasBusy = busy }
        return wasBusy && !busy
    }
}
