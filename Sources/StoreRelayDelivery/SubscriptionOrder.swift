import StoreRelayStorage
import StoreRelayCore

/// `order per-subscription` for one destination (SPEC "Delivery controls"): at most one event
/// of each `originalTransactionId` is on its way (waiting, in flight, or waiting to retry);
/// the ones after it are held here, parked, until it is delivered or dead-lettered, and then
/// go in acceptance order, which is journal order.
///
/// Only unfinished events are here, and every one of them counts against the destination's
/// window: the state is bounded by the window, whatever the number of subscriptions ever
/// seen, and an entry goes when its subscription has nothing left to send. Nothing here is
/// written down: every held event is unfinished in the destination's book, and a restart
/// admits the book's unfinished events again in journal order, which rebuilds the same holds.
///
/// Shared, like the `BookKeeper` that holds it, by the queue a reload builds in place of
/// another: an event the old queue still has in flight keeps holding its subscription, and
/// the event after it is released to whichever queue finishes it.
final class SubscriptionOrder: Sendable {
    private struct State {
        /// The journal position of the one event of each subscription that is on its way.
        var holders: [String: RecordPosition] = [:]
        /// Per subscription, the events waiting behind its holder, in journal order.
        var held: [String: [ParkedJob]] = [:]
        var heldCount = 0
    }

    private let state = Locked(State())

    /// Events waiting behind another of their subscription.
    var heldCount: Int { state.withLock { $0.heldCount } }

    /// Whether `job` may go on its way now. When an earlier event of its subscription is on
    /// its way, `job` is kept here (its event stays in the journal) and false is returned.
    /// Replays and events without a subscription are never held.
    func admit(_ job: ParkedJob) -> Bool {
        guard let subscription = job.subscription else { return true }
        return state.withLock { state in
            guard let holder = state.holders[subscription] else {
                state.holders[subscription] = job.position
                return true
            }
            // The holder itself (a retry, a job a reload handed over), or one that would
            // overtake it: a later event never goes before it, an earlier one is not held back.
            guard job.position > holder else { return true }
            var waiting = state.held[subscription, default: []]
            let index = waiting.lastIndex { $0.position < job.position }.map { $0 + 1 } ?? 0
            if index < waiting.count, waiting[index].position == job.position { return false }  // held already
            waiting.insert(job, at: index)
            state.held[subscription] = waiting
            state.heldCount += 1
            return false
        }
    }

    /// `position`'s delivery of `subscription` is finished: the next event of the
    /// subscription, if one is held, becomes its holder and is returned, due now, carrying
    /// `gap` (the id of the event that was dead-lettered) when there is one.
    func release(subscription: String?, at position: RecordPosition?, gap: String?, now: Timestamp) -> ParkedJob? {
        guard let subscription, let position else { return nil }
        return state.withLock { state in
            guard state.holders[subscription] == position else { return nil }
            guard var waiting = state.held[subscription], !waiting.isEmpty else {
                state.holders[subscription] = nil
                return nil
            }
            var next = waiting.removeFirst()
            state.held[subscription] = waiting.isEmpty ? nil : waiting
            state.heldCount -= 1
            state.holders[subscription] = next.position
            next.due = max(next.due, now)
            if let gap { next.orderingGap = gap }
            return next
        }
    }

    /// Every held event, for a destination that no longer orders (a reload dropped `order`).
    func releaseAll() -> [ParkedJob] {
        state.withLock { state in
            let all = state.held.values.flatMap { $0 }.sorted { $0.position < $1.position }
            state = State()
            return all
        }
    }
}
