import StoreRelayCore

/// The jobs one destination holds until they are due, and which of them keep their event in
/// memory. Pure bookkeeping: `DestinationQueue` does the reads and the attempts.
///
/// A job is kept whole (with Apple's body and the event, about 25 KB) when it is due within
/// `horizon` and fewer than `wholeLimit` journaled jobs are; otherwise it is parked (a few hundred bytes;
/// its event stays in the journal). Parked jobs coming due are read back ahead of time, at
/// most `readAhead` at once, so attempts rarely wait for a read. A backlog for a dead or slow
/// destination therefore costs memory per event, not per byte, and a job retried in an hour
/// does not hold its event for that hour.
struct WaitingRoom {
    static let horizon: Int64 = 1_000
    static let readAhead = 16

    let wholeLimit: Int
    private var whole = DueHeap<DeliveryJob>()
    private var parked = DueHeap<ParkedJob>()
    /// Parked jobs being read back.
    private(set) var reading = 0
    /// Whole jobs that could be parked. Replays cannot (they are not in the journal) and do
    /// not count against `wholeLimit`: a crowd of them must not keep parked jobs waiting.
    private var wholeJournaled = 0
    /// Room for another whole journaled job (counting those being read back).
    private var hasRoom: Bool { wholeJournaled + reading < wholeLimit }

    init(wholeLimit: Int) { self.wholeLimit = max(1, wholeLimit) }

    /// Sets aside room for `count` whole jobs being read from a destination's backlog (they
    /// count as being read until `release`).
    mutating func reserve(_ count: Int) { reading += count }
    mutating func release(_ count: Int) { reading -= count }

    /// The due time of the earliest parked job.
    var parkedEarliest: Timestamp? { parked.earliest }

    /// Whole journaled jobs that can still be added without parking one.
    var wholeRoom: Int { max(0, wholeLimit - wholeJournaled - reading) }

    /// When the budget of the longest-waiting job started (its acceptance, or the replay that
    /// renewed it): one pass over the jobs, for a scrape, not the delivery path.
    var oldestBudgetStart: Timestamp? {
        let wholeOldest = whole.jobs.lazy.map(\.budgetStart).min()
        let parkedOldest = parked.jobs.lazy.map(\.budgetStart).min()
        return [wholeOldest, parkedOldest].compactMap { $0 }.min()
    }

    /// Every job waiting, being read back included.
    var count: Int { whole.count + parked.count + reading }
    var wholeCount: Int { whole.count }
    var parkedCount: Int { parked.count }

    /// Adds `job`, whole or parked (jobs that cannot be parked, replays, stay whole).
    mutating func add(_ job: DeliveryJob, now: Timestamp) {
        let soon = job.due.milliseconds <= now.milliseconds + Self.horizon
        if soon && hasRoom {
            keepWhole(job)
        } else if let parkedJob = ParkedJob(job) {
            parked.insert(parkedJob)
        } else {
            keepWhole(job)
        }
    }

    private mutating func keepWhole(_ job: DeliveryJob) {
        if ParkedJob(job) != nil { wholeJournaled += 1 }
        whole.insert(job)
    }

    mutating func add(_ job: ParkedJob) { parked.insert(job) }

    /// The earliest whole job, if it is due by `now`.
    mutating func popDue(now: Timestamp) -> DeliveryJob? {
        guard let due = whole.earliest, due <= now, let job = whole.popEarliest() else { return nil }
        if ParkedJob(job) != nil { wholeJournaled -= 1 }
        return job
    }

    /// Puts back a job `popDue` returned that could not start after all, or one just read back.
    mutating func putBack(_ job: DeliveryJob) { keepWhole(job) }

    /// Parked jobs coming due that should be read back now; they count as `reading` until
    /// `readFinished`.
    mutating func takeJobsToRead(now: Timestamp) -> [ParkedJob] {
        var jobs: [ParkedJob] = []
        while reading < Self.readAhead, hasRoom,
              let due = parked.earliest, due.milliseconds <= now.milliseconds + Self.horizon {
            jobs.append(parked.popEarliest()!)
            reading += 1
        }
        return jobs
    }

    /// A read `takeJobsToRead` started has ended; the caller adds what it read (or parks the
    /// job again) itself.
    mutating func readFinished() { reading -= 1 }

    /// When something here next needs attention: the earliest whole job's due time (when
    /// `canStart`), or the moment the earliest parked job should be read back.
    func nextWake(canStart: Bool) -> Timestamp? {
        let start = canStart ? whole.earliest : nil
        var read: Timestamp?
        if reading < Self.readAhead, hasRoom, let due = parked.earliest {
            read = Timestamp(milliseconds: due.milliseconds - Self.horizon)
        }
        switch (start, read) {
        case let (a?, b?): return min(a, b)
        case let (a, b): return a ?? b
        }
    }

    /// Removes every waiting job (not those being read).
    mutating func drain() -> [WaitingJob] {
        wholeJournaled = 0
        return whole.drain().map(WaitingJob.whole) + parked.drain().map(WaitingJob.parked)
    }
}
