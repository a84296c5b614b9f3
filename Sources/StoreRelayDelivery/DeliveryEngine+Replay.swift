import StoreRelayConfig
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
    /// A notification Apple signed that this build still cannot read: its event lacks what
    /// could not be read, so sending it would mislead. A replay after an upgrade reads it again.
    case notUnderstood
    /// A `tampered` letter (cluster mode): nothing the server did not get from an instance
    /// is delivered; what it stands in for is replayed once it checks out.
    case tampered
    /// Signed before the dedupe window (`StalenessRule`): a downstream could not tell it from
    /// a first delivery. Sent only when the operator forces it; `reason` says why in a sentence.
    case stale(reason: String)
}

/// What a bulk replay did, in either mode.
public struct BulkReplayResult: Sendable, Equatable {
    /// Letters queued again.
    public var replayed = 0
    /// Letters left where they are because their notification is stale (`ReplayResult.stale`):
    /// a forced bulk replay takes them too.
    public var stale = 0

    public init(replayed: Int = 0, stale: Int = 0) {
        self.replayed = replayed
        self.stale = stale
    }

    /// `{"replayed":N,"stale":M}`, as `POST /api/dead-letters/replay` answers.
    public var json: JSONValue { ["replayed": .integer(Int64(replayed)), "stale": .integer(Int64(stale))] }
}

/// A dead letter being replayed: the destinations still to finish, the letters that a failed
/// replay wrote, and the bulk replay it belongs to, if any.
struct ReplayingLetter: Sendable {
    var remaining: Set<String>
    var rewritten: Set<String> = []
    var intent: String?
    /// The letter's `replayedBy` when the replay began, kept if it is written again.
    var markers: [String] = []
    /// Every destination finished; the letter is being deleted (the claim holds until then,
    /// so no other replay takes a letter already delivered).
    var resolving = false
}

extension DeliveryEngine {
    /// Re-queues dead letter `id` with a fresh attempt budget. It leaves the store only when
    /// the replayed delivery succeeds; if the replay fails too, the letter is rewritten with
    /// every attempt. Unrouted and quarantined letters (and those whose destination is gone)
    /// are routed again with the current configuration. A notification signed before the
    /// dedupe window is refused (`.stale`) unless `force`.
    public func replay(deadLetterId id: String, force: Bool = false) -> ReplayResult {
        replay(deadLetterId: id, intent: nil, force: force)
    }

    /// The rule a replay re-applies: the journal's dedupe window is the one acceptance used.
    var staleness: StalenessRule { StalenessRule(window: journal.options.dedupeRetention) }

    func replay(deadLetterId id: String, intent: String?, force: Bool) -> ReplayResult {
        guard let letter = deadLetters.letter(id: id) else { return .notFound }
        let topology = topology.current
        let plan = ReplayPlan.make(letter, routes: topology.routes, reprocess: reprocess.current,
                                   staleness: force ? nil : staleness, now: clock.now()) { topology.queues[$0] != nil }
        guard case .plan(let stored, let names) = plan else { return plan.refusal! }
        let claimed = replaying.withLock { replaying -> Bool in
            if var existing = replaying[id] {
                // Replayed already, by hand: a bulk replay asking too adopts that replay, so
                // a crash before it ends resumes it (unless another bulk replay owns it).
                if let intent, existing.intent == nil, !existing.resolving {
                    existing.intent = intent
                    replaying[id] = existing
                    adopted.withLock { $0.insert(id) }
                }
                return false
            }
            replaying[id] = ReplayingLetter(remaining: Set(names), intent: intent, markers: letter.replayedBy)
            return true
        }
        guard claimed else { return .alreadyReplaying }
        var notification = stored
        notification.disposition = .accept
        notification.destinations = names
        ledger.withLock { $0.record(notification, position: nil, destinations: names) }
        // A destination the event was first routed to shows pending again until the replay ends.
        for name in names { eventLog?.setState(.pending, eventId: notification.id, destination: name, receivedAt: notification.receivedAt) }
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

    /// Replays every dead letter matching the filters (quarantined ones only when `reason`
    /// asks for them, see `DeadLetterQuery.bulkReplayScope`; stale ones only when `force`).
    /// The letters taken are recorded first (`ReplayIntentStore`), so a crash in the middle
    /// neither loses the replay nor carries it out twice: the next start resumes it.
    public func replayAll(destination: String?, reason: DeadLetter.Reason?, force: Bool = false) -> BulkReplayResult {
        replayAll(DeadLetterQuery(destination: destination, reason: reason.map(DeadLetterReasonFilter.stored)), force: force)
    }

    /// Replays every dead letter matching `query` (a search on the page), as above.
    public func replayAll(_ query: DeadLetterQuery, force: Bool = false) -> BulkReplayResult {
        var ids: [String] = []
        var cursor: String?
        repeat {
            let page = deadLetters.list(query.bulkReplayScope, limit: 500, cursor: cursor)
            ids += page.items.map(\.id)
            cursor = page.nextCursor
        } while cursor != nil
        guard !ids.isEmpty else { return BulkReplayResult() }
        let intent = ReplayIntentStore.Intent(id: ReplayIntentStore.newID(), createdAt: clock.now(), letters: ids, force: force)
        do {
            try intents.record(intent)
        } catch {
            // Replaying is still better than refusing: only a crash midway would lose it.
            logger.error("bulk replay not recorded; a crash would end it", [("error", "\(error)")])
        }
        logger.info("bulk replay started", [("replay.id", intent.id), ("letters", ids.count)])
        return run(intent, letters: ids)
    }

    /// Resumes the bulk replays a previous run recorded and did not finish: each letter still
    /// there that this replay has not already written again is replayed once more.
    public func resumeReplays() {
        for intent in intents.unfinished() {
            let letters = intent.letters.filter { id in
                guard let letter = deadLetters.letter(id: id) else { return false }  // delivered meanwhile
                return !letter.replayedBy.contains(intent.id)
            }
            logger.info("bulk replay resumed", [("replay.id", intent.id), ("letters", letters.count),
                                                ("already.done", String(intent.letters.count - letters.count))])
            _ = run(intent, letters: letters)
        }
    }

    /// Replays `letters` as part of `intent`; the intent is forgotten once each is done.
    private func run(_ intent: ReplayIntentStore.Intent, letters: [String]) -> BulkReplayResult {
        intentsWaiting.withLock { $0[intent.id] = Set(letters) }
        if letters.isEmpty { finishIntentIfDone(intent.id) }
        var result = BulkReplayResult()
        for id in letters {
            switch replay(deadLetterId: id, intent: intent.id, force: intent.force) {
            case .replayed:
                result.replayed += 1
            case .alreadyReplaying where adopted.withLock({ $0.remove(id) }) != nil:
                result.replayed += 1  // now this replay's: done when that replay is
            case .stale:
                result.stale += 1
                letterDone(id, intent: intent.id)
            default:
                letterDone(id, intent: intent.id)
            }
        }
        return result
    }

    private func letterDone(_ id: String, intent: String) {
        intentsWaiting.withLock { $0[intent]?.remove(id) }
        finishIntentIfDone(intent)
    }

    private func finishIntentIfDone(_ intent: String) {
        let done = intentsWaiting.withLock { waiting -> Bool in
            guard waiting[intent]?.isEmpty == true else { return false }
            waiting[intent] = nil
            return true
        }
        guard done else { return }
        queue.async { [intents, logger] in
            intents.remove(intent)
            logger.info("bulk replay finished", [("replay.id", intent)])
        }
    }

    /// The `replayedBy` a letter being replayed gets if it is written again: what it had,
    /// and the bulk replay it is part of.
    func replayMarkers(of id: String) -> [String] {
        replaying.withLock { replaying in
            guard let entry = replaying[id] else { return [] }
            return entry.markers + (entry.intent.map { entry.markers.contains($0) ? [] : [$0] } ?? [])
        }
    }

    /// One replayed delivery finished: delivered (`rewrittenAs` nil) or dead-lettered again.
    /// When all have, the original letter goes unless a new failure rewrote it in place.
    func finishReplay(_ id: String, destination: String, rewrittenAs newId: String?) {
        let done = replaying.withLock { replaying -> ReplayingLetter? in
            guard var entry = replaying[id] else { return nil }
            entry.remaining.remove(destination)
            if let newId { entry.rewritten.insert(newId) }
            guard entry.remaining.isEmpty else {
                replaying[id] = entry
                return nil
            }
            if entry.rewritten.contains(id) {
                replaying[id] = nil
            } else {
                entry.resolving = true
                replaying[id] = entry
            }
            return entry
        }
        guard let done else { return }
        // Rewritten in place: the letter now says which replay wrote it (`replayedBy`).
        if done.rewritten.contains(id) {
            if let intent = done.intent { letterDone(id, intent: intent) }
            return
        }
        // Deleting syncs the directory: not on the delivery pool this runs on. The claim, and
        // the bulk replay's count, end only once the letter is gone: no other replay takes a
        // letter already delivered, and a crash before the delete replays it rather than
        // forgetting it.
        queue.async { [self] in
            deadLetters.delete(id: id)
            let intent = replaying.withLock { $0.removeValue(forKey: id)?.intent }
            logger.info("replayed dead letter resolved", [("deadLetter.id", id)])
            if let intent { letterDone(id, intent: intent) }
        }
    }
}

/// What a replay of one dead letter sends, and where, in either mode: the letter's own
/// destination while it exists (and the letter is not unrouted), else wherever the current
/// routes send its event. A notification an older build could not read is read again first.
package enum ReplayPlan {
    case plan(StoredNotification, destinations: [String])
    case refused(ReplayResult)

    /// The refusal, for a plan that is not one.
    package var refusal: ReplayResult? {
        if case .refused(let result) = self { result } else { nil }
    }

    /// - Parameter staleness: the rule acceptance applied, applied again at `now`: a letter
    ///   that waited past the dedupe window is as stale as a notification that arrived past
    ///   it. Nil when the operator forces the replay.
    package static func make(
        _ letter: DeadLetter, routes: RouteTable, reprocess: (@Sendable (StoredNotification) -> StoredNotification?)?,
        staleness: StalenessRule?, now: Timestamp, exists: (String) -> Bool
    ) -> ReplayPlan {
        if letter.reason == .tampered { return .refused(.tampered) }
        guard var stored = letter.notification else { return .refused(.unreadable) }
        if stored.disposition.isNotUnderstood {
            // Read Apple's body again with this build: once it reads it, it goes out like any
            // quarantined letter. (Posting the body again would only be a duplicate.)
            guard let again = reprocess?(stored), !again.disposition.isNotUnderstood else { return .refused(.notUnderstood) }
            stored = again
        }
        // The event keeps Apple's signedDate (null for V1 and undated payloads, never stale).
        let signed = stored.event.json["signedDate"]?.stringValue.flatMap(Timestamp.init(iso8601:))
        if let stale = staleness?.staleness(signed: signed, now: now) { return .refused(.stale(reason: stale)) }
        let names: [String]
        if let destination = letter.destination, letter.reason != .unrouted, exists(destination) {
            names = [destination]
        } else {
            let event = stored.event
            names = event.environment.map { environment in
                routes.destinations(environment: environment, bundleId: event.bundleId ?? "", type: event.type, subtype: event.subtype)
                    .filter(exists)
            } ?? []
        }
        return names.isEmpty ? .refused(.noRoute) : .plan(stored, destinations: names)
    }
}
