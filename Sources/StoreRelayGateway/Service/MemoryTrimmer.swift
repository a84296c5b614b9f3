import Dispatch
import StoreRelayDelivery
internal import CStoreRelayShims

/// Gives memory back to the system once a burst is over.
///
/// A backlog of deliveries holds every waiting notification in memory (tens of kilobytes
/// each); glibc keeps what was freed for reuse, so after a burst the gateway would stay at
/// its peak — hundreds of MiB — while idle. Each time the backlog drains to nothing, the free
/// pages of every arena are returned (`malloc_trim`): once per busy period, never while busy.
final class MemoryTrimmer: @unchecked Sendable {
    // Invariant: `timer` is set once in init (DispatchSource's cancel is thread-safe);
    // `edge` is touched only by the timer's handler, on its serial queue.
    private let timer: any DispatchSourceTimer
    private var edge = BusyPeriodEnd()

    init(delivery: DeliveryEngine, interval: DispatchTimeInterval = .seconds(1)) {
        timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "storerelay.memory-trim"))
        timer.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(200))
        timer.setEventHandler { [weak self, weak delivery] in
            guard let self, let delivery else { return }
            if edge.ended(busy: delivery.unfinishedEvents > 0) { _ = storerelay_malloc_trim() }
        }
        timer.resume()
    }

    func stop() { timer.cancel() }
}

/// Tells, from one sample of "busy?" after another, when a busy period has just ended.
struct BusyPeriodEnd {
    private var wasBusy = false

    mutating func ended(busy: Bool) -> Bool {
        defer { wasBusy = busy }
        return wasBusy && !busy
    }
}
