import StoreRelayDelivery
import StoreRelayCore

/// Replays meeting `tampered` letters (docs/SPEC.md "Cluster mode", Integrity). A record that
/// fails its `cluster-key` check is never acted on as it is, but it is not discarded either:
/// sealed with a key this instance lacks (an instance on the old key alone during a key
/// rotation), or written before the key and met after `unsealed` was dropped, it is often
/// the only copy of a notification acknowledged to Apple, which Apple will not send again.
/// So it is kept aside (`tampered-letters`) behind a sealed `tampered` letter, and a replay of
/// that letter once the keys are right finds it checks out and replays it.
extension ClusterDelivery {
    /// What a replay does with a `tampered` letter.
    enum TamperedLetter {
        /// What it stands in for checks out now: replay this.
        case recovered(DeadLetter)
        case refused(ReplayResult)
        /// No longer stored as read: read it again.
        case changed
    }

    /// `letter`, stored as `read`, is `tampered`. One an instance wrote (it opens) stands in
    /// for what was kept aside. One that failed its check just now is counted, logged, moved
    /// aside, and a sealed `tampered` letter written in its place (only over what was read:
    /// a genuine letter written under the id meanwhile stays).
    func meetTampered(_ letter: DeadLetter, read: [UInt8]) async -> TamperedLetter {
        if case .intact = seal.open(read, .letter, letter.id) {
            guard let original = await recovered(letter) else { return .refused(.tampered) }
            logger.notice("tampered dead letter checks out now; replaying what it stood in for", [
                ("dead_letter.id", letter.id), ("event.id", original.eventId),
            ])
            return .recovered(original)
        }
        observer.recordTampered(record: ClusterSeal.Kind.letter.rawValue)
        logger.error("cluster record failed its integrity check; it is kept aside and not replayed", [
            ("dead_letter.id", letter.id), ("record", ClusterSeal.Kind.letter.rawValue), ("why", letter.detail ?? ""),
        ])
        switch await deadLetters.setAside(letter, read: read) {
        case .kept:
            return .refused(.tampered)
        case .changed:
            return .changed
        case .failed:
            logger.warning("tampered dead letter not set aside: the cluster server did not take it", [("dead_letter.id", letter.id)])
            return .refused(.tampered)
        }
    }

    /// What the `tampered` letter `stub` stands in for, if it checks out under this
    /// instance's keys now: the letter as it was, or one made of the event record a delivery
    /// could not open (only for the destination the event is routed to, with the attempts its
    /// progress holds if that checks out too).
    func recovered(_ stub: DeadLetter) async -> DeadLetter? {
        let aside = await deadLetters.aside(id: stub.id)
        if let bytes = aside.letter, let letter = deadLetters.intact(id: stub.id, bytes), letter.reason != .tampered, letter.id == stub.id {
            return letter
        }
        guard let destination = stub.destination, let record = aside.event,
              case .intact(let bytes) = seal.open(record, .event, stub.eventId),
              let stored = StoredNotification(decoding: bytes), stored.id == stub.eventId,
              stored.disposition == .accept, stored.destinations.contains(destination)
        else { return nil }
        var attempts: [DeliveryAttempt] = []
        if let progress = aside.progress, case .intact(let bytes) = seal.open(progress, .progress, destination, stub.eventId) {
            attempts = ClusterProgress(bytes)?.attempts ?? []
        }
        var letter = DeadLetter(notification: stored, destination: destination, reason: .exhausted,
                                detail: "its record failed a cluster-key check and was kept aside; it checks out now",
                                attempts: attempts, createdAt: stub.createdAt)
        letter.id = stub.id
        return letter
    }
}
