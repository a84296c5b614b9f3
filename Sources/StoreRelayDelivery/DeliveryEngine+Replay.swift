import StoreRelayCore

/// What a replay request answers.
public enum ReplayResult: Sendable, Equatable {
    /// Queued again for these destinations.
    case replayed(destinations: [String])
    case notFound
    /// An unrouted or quarantined letter that still matches no route.
    case noRoute
    /// Already being replayed.
    case alreadyReplaying
    /// An `unreadable` letter: its event could not be read, so there is nothing to send.
    case unreadable
}

extension DeliveryEngine {
    /// Re-queues dead letter `id` with a fresh attempt budget. It leaves the store only when
    /// the replayed delivery succeeds; if the replay fails too, the letter is rewritten with
    /// every attempt. Unrouted and quarantined letters (and those whose destination is gone)
    /// are routed again with the current configuration.
    public func replay(deadLetterId id: String) -> ReplayResult {
        guard let letter = deadLetters.letter(id: id) else { return .notFound }
        guard let stored = letter.notification else { return .unreadable }
        let topology = topology.current
        var names: [String]
        if let destination = letter.destination, letter.reason != .unrouted, topology.queues[destination] != nil {
            names = [destination]
        } else {
            let event = stored.event
            names = topology.routes.destinations(environment: event.environment, bundleId: event.bundleId ?? "",
                                                 type: event.type, subtype: event.subtype)
                .filter { topology.queues[$0] != nil }
        }
        guard !names.isEmpty else { return .noRoute }
        let claimed = replaying.withLock { replaying -> Bool in
            guard replaying[id] == nil else { return false }
            replaying[id] = (Set(names), [])
            return true
        }
        guard claimed else { return .alreadyReplaying }
        var notification = stored
        notification.disposition = .accept
        notification.destinations = names
        ledger.withLock { $0.record(notification, position: nil, destinations: names) }
        let now = clock.now()
        for name in names {
            guard let queue = topology.queues[name] else { continue }
            // The history stays with the letter's own destination; the budget starts afresh.
            let history = name == letter.destination ? letter.attempts : []
            queue.enqueue(DeliveryJob(
                notification: notification, destination: name, position: nil, body: queue.body(for: notification),
                attempts: history, due: now, attemptsBeforeBudget: history.count, budgetStart: now, replayOf: id))
        }
        logger.info("dead letter replayed", [("deadLetter.id", id), ("event.id", letter.eventId),
                                             ("destinations", names.joined(separator: ","))])
        return .replayed(destinations: names)
    }

    /// Replays every dead letter matching the filters; returns how many were queued again.
    public func replayAll(destination: String?, reason: DeadLetter.Reason?) -> Int {
        var count = 0
        var cursor: String?
        repeat {
            let page = deadLetters.list(destination: destination, reason: reason, limit: 500, cursor: cursor)
            for letter in page.items {
                if case .replayed = replay(deadLetterId: letter.id) { count += 1 }
            }
            cursor = page.nextCursor
        } while cursor != nil
        return count
    }

    /// One replayed delivery finished: delivered (`rewrittenAs` nil) or dead-lettered again.
    /// When all have, the original letter goes unless a new failure rewrote it in place.
    func finishReplay(_ id: String, destination: String, rewrittenAs newId: String?) {
        let done = replaying.withLock { replaying -> Set<String>? in
            guard var entry = replaying[id] else { return nil }
            entry.remaining.remove(destination)
            if let newId { entry.rewritten.insert(newId) }
            if entry.remaining.isEmpty {
                replaying[id] = nil
                return entry.rewritten
            }
            replaying[id] = entry
            return nil
        }
        guard let rewritten = done, !rewritten.contains(id) else { return }
        // Deleting syncs the directory: not on the delivery pool this runs on.
        queue.async { [deadLetters, logger] in
            deadLetters.delete(id: id)
            logger.info("replayed dead letter resolved", [("deadLetter.id", id)])
        }
    }
}
