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
                    s.retiring[digest] = entry.firstSeen
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
            let entries = plan.retired.map(\.entry).sorted { $0.digest < $1.digest }
            try resyncRetiredFileIfNeeded()
            let length = retiredFile.access { $0.length }
            let newLength = try DedupeSnapshot.append(entries, directory: directory, at: length)
            retiredFile.access { $0.appended(entries, newLength: newLength) }
            // Synced: the ids move from memory to the index of the file. Only this queue
            // changes `retired`, so the new index (a copy of the filter) is built unlocked.
            let next = state.withLock { $0.retired }.adding(entries, at: length + 4, file: nil)
            state.withLock { s in
                s.retired = next
                for entry in entries { s.retiring[entry.digest] = nil }
            }
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
                s.retiring[entry.digest] = nil
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

    /// Rewrites `seen-ids` as a few sorted chunks without the ids past the retention, when
    /// they are due to go or the chunks have grown many. On the retire queue; a failure leaves
    /// the file as it was, to be tried again later.
    private func dropExpiredIDsIfDue() {
        let now = options.clock.now().milliseconds
        let cutoff = now - options.dedupeRetentionMilliseconds
        let index = state.withLock { $0.retired }
        guard retiredFile.access({ $0.needsCompaction(cutoff: cutoff, now: now, index: index) }) else { return }
        do throws(StorageError) {
            let made = try DedupeSnapshot.compact(merging: index, cutoff: cutoff, directory: directory)
            retiredFile.access { $0 = RetiredIDsFile(length: made.length, holding: made.index, compactedAt: now) }
            state.withLock { $0.retired = made.index }
            logger.info("journal compacted seen-ids", [
                ("journal.ids", String(made.index.count)), ("journal.expired_ids", String(made.dropped)),
                ("journal.chunks", String(made.index.chunks.count)),
            ])
        } catch {
            retiredFile.access { file in
                file.failedAt = now
                file.lengthIsKnown = false
            }
            logger.error("journal could not compact seen-ids; tried again in 5 minutes", [("error", error.message)])
        }
    }

    /// After a rewrite that failed part-way, finds where the next chunk goes and what the
    /// file holds: the old file or the new one, whichever the rename left, read back and
    /// indexed afresh (and rewritten when it needs it). A file whose header is no longer ours
    /// is moved aside, as at open; an I/O error is thrown, and the ids stay with their
    /// segments until a later retirement.
    private func resyncRetiredFileIfNeeded() throws(StorageError) {
        guard !retiredFile.access({ $0.lengthIsKnown }) else { return }
        let path = directory + "/" + DedupeSnapshot.fileName
        let now = options.clock.now().milliseconds
        let cutoff = now - options.dedupeRetentionMilliseconds
        guard let scan = try DedupeSnapshot.scan(path: path, cutoff: cutoff) else {
            let aside = path + ".corrupt-\(now)"
            try JournalFiles.renameFile(path, aside)
            logger.error("journal seen-ids no longer reads back; moved aside, ids of retired segments are forgotten",
                         [("journal.file", aside)])
            let made = try DedupeSnapshot.compact(merging: .empty, cutoff: cutoff, directory: directory)
            retiredFile.access { $0 = RetiredIDsFile(length: made.length, holding: made.index, compactedAt: now) }
            state.withLock { $0.retired = made.index }
            return
        }
        guard scan.skippedDamage || !scan.unsortedChunks.isEmpty else {
            retiredFile.access { file in
                file.length = scan.intactLength
                file.lengthIsKnown = true
            }
            state.withLock { $0.retired = scan.index }
            return
        }
        logger.error("journal seen-ids has a damaged chunk; rewritten from its intact chunks", [("journal.file", path)])
        let made = try DedupeSnapshot.compact(merging: scan.index, unsortedChunks: scan.unsortedChunks, cutoff: cutoff,
                                              directory: directory)
        retiredFile.access { $0 = RetiredIDsFile(length: made.length, holding: made.index, compactedAt: now) }
        state.withLock { $0.retired = made.index }
    }
}
