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
        state.queue.async {
            let plan: (victims: [UInt64], snapshot: [String: Int64])? = self.state.access { s in
                guard !s.closed else { return nil }
                let victims = s.segments.filter { $0 <= sequence && $0 < s.activeSegment }.sorted()
                let cutoff = self.options.clock.now().milliseconds - self.options.dedupeRetentionMilliseconds
                var snapshot = s.snapshot.filter { $0.value >= cutoff }
                if !victims.isEmpty {
                    let doomed = Set(victims)
                    for (id, entry) in s.live where doomed.contains(entry.segment) {
                        s.live[id] = nil
                        if entry.firstSeen >= cutoff { snapshot[id] = entry.firstSeen }
                    }
                    s.segments.subtract(victims)
                }
                // In memory first: later plans build on this one, and the writer queue runs
                // their snapshot writes in the same order, so the newest file is a superset.
                s.snapshot = snapshot
                return (victims, snapshot)
            }
            guard let plan else {
                self.callbackQueue.async { completion(.failure(.closed)) }
                return
            }
            self.writer.queue.async {
                var removed: [UInt64] = []
                var failure: JournalError?
                do throws(JournalError) {
                    try DedupeSnapshot.write(plan.snapshot, directory: self.directory)
                    for victim in plan.victims {
                        try FileIO.removeFile(SegmentName.path(victim, in: self.directory))
                        removed.append(victim)
                    }
                    try FileIO.syncDirectory(self.directory)
                } catch {
                    failure = error
                }
                let (removedSegments, failed) = (removed, failure)
                self.state.queue.async {
                    let kept = plan.victims.filter { !removedSegments.contains($0) }
                    self.state.access { $0.segments.formUnion(kept) }
                    if let failure = failed {
                        self.logger.error("journal could not retire segments", [("error", failure.message)])
                        self.callbackQueue.async { completion(.failure(failure)) }
                    } else {
                        self.logger.info("journal retired segments", [("journal.segments", plan.victims.map(String.init).joined(separator: ","))])
                        self.callbackQueue.async { completion(.success(removedSegments)) }
                    }
                }
            }
        }
    }
}
