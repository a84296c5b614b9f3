import Dispatch

extension Journal {
    /// Deletes every segment with a sequence up to `sequence` (the active segment excepted)
    /// once all deliveries in them are finished, keeping duplicate detection: their ids are
    /// first written into the `seen-ids` snapshot (temp file, fsync, rename, directory fsync),
    /// and only then are the files removed. Snapshot entries older than
    /// `options.dedupeRetention` are dropped on each rewrite. `completion` receives the
    /// sequences removed.
    public func retireSegments(upTo sequence: UInt64,
                               completion: @escaping @Sendable (Result<[UInt64], JournalError>) -> Void) {
        let plan: (victims: [UInt64], snapshot: [String: Int64])? = state.withLock { s in
            guard !s.closed else { return nil }
            let victims = s.segments.filter { $0 <= sequence && $0 < s.activeSegment }.sorted()
            let cutoff = options.clock.now().milliseconds - options.dedupeRetentionMilliseconds
            var snapshot = s.snapshot.filter { $0.value >= cutoff }
            if !victims.isEmpty {
                let doomed = Set(victims)
                for (id, entry) in s.live where doomed.contains(entry.segment) {
                    s.live[id] = nil
                    if entry.firstSeen >= cutoff { snapshot[id] = entry.firstSeen }
                }
                s.segments.subtract(victims)
            }
            // In memory first: later plans build on this one. Queued while the lock is held,
            // so the retire queue runs the snapshot writes in plan order and the newest file
            // is a superset.
            s.snapshot = snapshot
            let plan = (victims, snapshot)
            retireQueue.async { self.carryOut(plan, completion: completion) }
            return plan
        }
        if plan == nil { callbackQueue.async { completion(.failure(.closed)) } }
    }

    /// On the retire queue: the snapshot, then the files, then the directory entry. Never
    /// the active segment, so the writer needs no part in it.
    private func carryOut(_ plan: (victims: [UInt64], snapshot: [String: Int64]),
                          completion: @escaping @Sendable (Result<[UInt64], JournalError>) -> Void) {
        var removed: [UInt64] = []
        var failure: JournalError?
        do throws(JournalError) {
            try DedupeSnapshot.write(plan.snapshot, directory: directory)
            for victim in plan.victims {
                try FileIO.removeFile(SegmentName.path(victim, in: directory))
                removed.append(victim)
            }
            try FileIO.syncDirectory(directory)
        } catch {
            failure = error
        }
        let kept = plan.victims.filter { !removed.contains($0) }
        state.withLock { $0.segments.formUnion(kept) }
        if let failure {
            logger.error("journal could not retire segments", [("error", failure.message)])
            callbackQueue.async { completion(.failure(failure)) }
        } else {
            logger.info("journal retired segments", [("journal.segments", plan.victims.map(String.init).joined(separator: ","))])
            let removedSegments = removed
            callbackQueue.async { completion(.success(removedSegments)) }
        }
    }
}
