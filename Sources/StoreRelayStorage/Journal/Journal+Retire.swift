extension Journal {
    /// One retirement: the segments to delete and the ids they hold that must be remembered.
    struct RetirePlan: Sendable {
        var victims: [UInt64]
        var retired: [(entry: DedupeSnapshot.Entry, segment: UInt64)]
    }

    /// Deletes every segment with a sequence up to `sequence` (the active segment excepted)
    /// once all deliveries in them are finished, keeping duplicate detection: their ids are
    /// first appended to the `seen-ids` snapshot and synced, and only then are the files
    /// removed. Ids older than `options.dedupeRetention` are not kept, and are dropped from
    /// the snapshot at most hourly. `completion` receives the sequences removed.
    public func retireSegments(upTo sequence: UInt64,
                               completion: @escaping @Sendable (Result<[UInt64], StorageError>) -> Void) {
        let plan: RetirePlan? = state.withLock { s in
            guard !s.closed else { return nil }
            let victims = s.segments.filter { $0 <= sequence && $0 < s.activeSegment }.sorted()
            let cutoff = options.clock.now().milliseconds - options.dedupeRetentionMilliseconds
            var plan = RetirePlan(victims: victims, retired: [])
            if !victims.isEmpty {
                let doomed = Set(victims)
                for (digest, entry) in s.live where doomed.contains(entry.segment) {
                    s.live[digest] = nil
                    guard entry.firstSeen >= cutoff else { continue }
                    s.snapshot[digest] = entry.firstSeen
                    plan.retired.append(((digest, entry.firstSeen), entry.segment))
                }
                s.segments.subtract(victims)
            }
            // Queued while the lock is held, so retirements reach the snapshot in plan order.
            let queued = plan
            retiredFile.queue.async { self.carryOut(queued, completion: completion) }
            return queued
        }
        if plan == nil { callbackQueue.async { completion(.failure(.journalClosed)) } }
    }

    /// On the retire queue: the ids, then the files, then the directory entry; then, now and
    /// then, the snapshot without its expired ids. Never the active segment, so the writer
    /// needs no part in it.
    private func carryOut(_ plan: RetirePlan, completion: @escaping @Sendable (Result<[UInt64], StorageError>) -> Void) {
        var removed: [UInt64] = []
        var failure: StorageError?
        do throws(StorageError) {
            let entries = plan.retired.map(\.entry)
            try resyncRetiredFileIfNeeded()
            let length = retiredFile.access { $0.length }
            let newLength = try DedupeSnapshot.append(entries, directory: directory, at: length)
            retiredFile.access { $0.appended(entries, newLength: newLength) }
            for victim in plan.victims {
                try JournalFiles.removeFile(SegmentName.path(victim, in: directory))
                removed.append(victim)
            }
            if !plan.victims.isEmpty { try JournalFiles.syncDirectory(directory) }
        } catch {
            failure = error
        }
        let kept = Set(plan.victims).subtracting(removed)
        state.withLock { s in
            s.segments.formUnion(kept)
            guard removed.isEmpty, failure != nil else { return }
            // Nothing was deleted because the ids could not be stored: they stay with their
            // segments, to be moved again by the next retirement.
            for (entry, segment) in plan.retired {
                s.snapshot[entry.digest] = nil
                s.live[entry.digest] = LiveEntry(segment: segment, firstSeen: entry.firstSeen)
            }
        }
        if let failure {
            logger.error("journal could not retire segments", [("error", failure.message)])
            callbackQueue.async { completion(.failure(failure)) }
            return
        }
        if !plan.victims.isEmpty {
            logger.info("journal retired segments", [("journal.segments", plan.victims.map(String.init).joined(separator: ","))])
        }
        dropExpiredIDsIfDue()
        let removedSegments = removed
        callbackQueue.async { completion(.success(removedSegments)) }
    }

    /// Rewrites `seen-ids` without the ids past the retention, and forgets them in memory.
    /// On the retire queue; a failure leaves the file as it was, to be tried again later.
    private func dropExpiredIDsIfDue() {
        let now = options.clock.now().milliseconds
        let cutoff = now - options.dedupeRetentionMilliseconds
        guard retiredFile.access({ $0.needsCompaction(cutoff: cutoff, now: now) }) else { return }
        do throws(StorageError) {
            let path = directory + "/" + DedupeSnapshot.fileName
            let bytes = try JournalFiles.readAll(path)
            let length = retiredFile.access { $0.length }
            guard let contents = DedupeSnapshot.decode(Array(bytes.prefix(length))) else {
                throw StorageError(.io, path: path, message: "seen-ids no longer reads back")
            }
            let kept = contents.entries.filter { $0.firstSeen >= cutoff }
            let expired = contents.entries.filter { $0.firstSeen < cutoff }.map(\.digest)
            let newLength = try DedupeSnapshot.compact(kept, directory: directory)
            retiredFile.access { file in
                file = RetiredIDsFile(length: newLength, holding: kept, compactedAt: now)
            }
            state.withLock { s in
                for digest in expired where (s.snapshot[digest] ?? .max) < cutoff { s.snapshot[digest] = nil }
            }
            logger.info("journal forgot expired ids", [("journal.ids", String(expired.count))])
        } catch {
            retiredFile.access { file in
                file.compactedAt = now
                file.lengthIsKnown = false
            }
            logger.error("journal could not drop expired ids from seen-ids", [("error", error.message)])
        }
    }

    /// After a rewrite that failed part-way, finds where the next chunk goes: the end of the
    /// intact file on disk, old or new; or, when it does not read back whole, writes a new
    /// one from memory (which holds every id the file should).
    private func resyncRetiredFileIfNeeded() throws(StorageError) {
        guard !retiredFile.access({ $0.lengthIsKnown }) else { return }
        let path = directory + "/" + DedupeSnapshot.fileName
        if let contents = DedupeSnapshot.decode(try JournalFiles.readAll(path)), !contents.skippedDamage {
            retiredFile.access { file in
                file.length = contents.intactLength
                file.lengthIsKnown = true
            }
            return
        }
        let entries = state.withLock { $0.snapshot.map { (digest: $0.key, firstSeen: $0.value) } }
        let length = try DedupeSnapshot.compact(entries, directory: directory)
        let now = options.clock.now().milliseconds
        retiredFile.access { $0 = RetiredIDsFile(length: length, holding: entries, compactedAt: now) }
    }
}
