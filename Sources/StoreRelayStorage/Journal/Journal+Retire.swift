extension Journal {
    /// Deletes every segment with a sequence up to `sequence` (the active segment excepted)
    /// once all deliveries in them are finished, keeping duplicate detection: their ids are
    /// in `seen-ids` since they were sealed (`sealSegments`, done here first if it is not yet),
    /// and only sealed segments are removed. Ids older than `options.dedupeRetention` are
    /// dropped from the snapshot at most hourly. `completion` receives the sequences removed.
    public func retireSegments(upTo sequence: UInt64,
                               completion: @escaping @Sendable (Result<[UInt64], StorageError>) -> Void) {
        let planned: Bool = state.withLock { s in
            guard !s.closed else { return false }
            // Queued while the lock is held, so retirements run in the order they were asked for.
            retiredFile.queue.async { self.carryOut(upTo: sequence, completion: completion) }
            return true
        }
        if !planned { callbackQueue.async { completion(.failure(.journalClosed)) } }
    }

    /// On the retire queue: seal, then delete the sealed files asked for, then the directory
    /// entry; then, now and then, the snapshot without its expired ids. Never the active
    /// segment, so the writer needs no part in it.
    private func carryOut(upTo sequence: UInt64, completion: @escaping @Sendable (Result<[UInt64], StorageError>) -> Void) {
        var removed: [UInt64] = []
        var failure: StorageError?
        do throws(StorageError) {
            try sealSegments()
            let victims = state.withLock { s in
                let victims = s.segments.filter { $0 <= sequence && $0 <= s.sealedThrough && $0 < s.activeSegment }.sorted()
                s.segments.subtract(victims)
                return victims
            }
            defer { state.withLock { $0.segments.formUnion(Set(victims).subtracting(removed)) } }
            for victim in victims {
                try JournalFiles.removeFile(SegmentName.path(victim, in: directory))
                removed.append(victim)
            }
            if !victims.isEmpty { try JournalFiles.syncDirectory(directory) }
        } catch {
            failure = error
        }
        if let failure {
            logger.error("journal could not retire segments", [("error", failure.message)])
            callbackQueue.async { completion(.failure(failure)) }
            return
        }
        if !removed.isEmpty {
            logger.info("journal retired segments", [("journal.segments", removed.map(String.init).joined(separator: ","))])
        }
        dropExpiredIDsIfDue()
        saveRetiredIndexIfChanged()
        let removedSegments = removed
        callbackQueue.async { completion(.success(removedSegments)) }
    }

    /// Rewrites `seen-ids` as a few sorted chunks without the ids past the retention, when
    /// they are due to go or the chunks have grown many. On the retire queue; a failure leaves
    /// the file as it was, to be tried again later.
    func dropExpiredIDsIfDue() {
        let now = options.clock.now().milliseconds
        let cutoff = now - options.dedupeRetentionMilliseconds
        let index = state.withLock { $0.retired }
        guard retiredFile.access({ $0.needsCompaction(cutoff: cutoff, now: now, index: index) }) else { return }
        do throws(StorageError) {
            let made = try DedupeSnapshot.compact(merging: index, cutoff: cutoff, directory: directory)
            retiredFile.access { $0 = RetiredIDsFile(length: made.length, holding: made.index, compactedAt: now) }
            state.withLock { $0.retired = made.index }
            logger.info("journal compacted seen-ids", [
                ("journal.ids", made.index.count), ("journal.expired_ids", made.dropped),
                ("journal.chunks", made.index.chunks.count),
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
    func resyncRetiredFileIfNeeded() throws(StorageError) {
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
