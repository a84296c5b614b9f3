import Dispatch
import StoreRelayAppStoreAPI
import StoreRelayConfig
import StoreRelayStorage
import StoreRelayCore

/// Pulls one app's Notification History for one environment and feeds what Apple holds
/// through the normal acceptance path (SPEC "Reconciliation with Apple"): what the gateway
/// already has is a duplicate, what it missed is stored and fanned out, marked
/// `recoveredBy: "history"`.
///
/// Passes run one at a time in the app and environment's own line (`ReconcileRecord`, kept
/// across reloads) — the scheduled ones every `reconcile every`, and those `storerelay
/// reconcile` asks for. A pass is a chain of callbacks: no thread waits while Apple or the
/// intake answers. The checkpoint advances only once a window reaching back to it has had its
/// last page stored.
final class Reconciler: Sendable {
    let bundleId: String
    let environment: AppStoreEnvironment
    let api: AppStoreServerAPI
    private let schedule: ReconcileSchedule?
    private let checkpoint: ReconcileCheckpoint
    private let intake: NotificationIntake
    let store: any NotificationStore
    private let dedupeWindow: Duration
    let clock: any TimeSource
    let logger: Logger
    private let metrics: GatewayMetrics
    /// Told of failed passes, recoveries and failed probes.
    let operational: OperationalEvents
    /// Queues and last outcomes of this app and environment, shared with the reconcilers a
    /// reload builds after this one.
    let record: ReconcileRecord
    private let limits: ReconcileLimits
    private let timer = RepeatingTimer()
    /// Whether a scheduled pass waits in line behind a pass still running.
    private let scheduledPassWaiting = Locked(false)

    /// Apple keeps 180 days of production history and 30 of sandbox; an hour's margin keeps
    /// a slow clock from asking for a day Apple no longer has.
    static func historyKept(_ environment: AppStoreEnvironment) -> Int64 {
        (environment == .production ? 180 : 30) * 86_400_000 - 3_600_000
    }

    init(bundleId: String, environment: AppStoreEnvironment, api: AppStoreServerAPI, schedule: ReconcileSchedule?,
         record: ReconcileRecord, directory: String, intake: NotificationIntake, store: any NotificationStore, dedupeWindow: Duration,
         clock: any TimeSource, logger: Logger, metrics: GatewayMetrics, operational: OperationalEvents = OperationalEvents(),
         limits: ReconcileLimits = ReconcileLimits()) {
        self.operational = operational
        self.record = record
        self.limits = limits
        self.bundleId = bundleId
        self.environment = environment
        self.api = api
        self.schedule = schedule
        checkpoint = ReconcileCheckpoint(directory: directory, bundleId: bundleId, environment: environment)
        self.intake = intake
        self.store = store
        self.dedupeWindow = dedupeWindow
        self.clock = clock
        self.logger = logger
        self.metrics = metrics
    }

    /// Starts the schedule, when there is one: one pass every `reconcile every`, the first at
    /// once when the gateway starts (a restart is when something is most likely to have been
    /// missed), or one interval on after a reload.
    func start(passNow: Bool) {
        guard let schedule else { return }
        let every = Int(schedule.every.wholeMilliseconds)
        timer.start(after: .milliseconds(passNow ? 200 : every), every: .milliseconds(every), on: record.queue) { [self] in
            // A pass that outlasts the interval delays the next rather than piling them up: one
            // scheduled pass at most waits behind it.
            let alreadyWaiting = scheduledPassWaiting.withLock { waiting -> Bool in
                defer { waiting = true }
                return waiting
            }
            guard !alreadyWaiting else { return }
            record.passes.enqueue { [self] done in
                scheduledPassWaiting.withLock { $0 = false }
                // Cluster mode: the instance that takes this period's lease reconciles; the
                // others skip it (what they would fetch is in the shared dedupe already).
                let lease = "reconcile:\(bundleId):\(environment.rawValue)"
                store.takeLease(lease, for: .milliseconds(Int64(Double(every) * 0.9))) { [self] taken in
                    guard taken else {
                        logger.info("reconciliation skipped: another instance holds this period's lease", tagged([]))
                        return done()
                    }
                    runPass(ReconcileRequest()) { _ in done() }
                }
            }
        }
    }

    /// Stops the schedule and cuts short any wait for Apple: a pass in progress ends at its
    /// next call to Apple (the exchange under way completes; if that was the last page, the
    /// pass completes too). Later passes of this app wait in the same line for it.
    func stop() {
        timer.stop()
        api.cancel()
    }

    /// Runs one pass after any pass in progress, then calls `completion` with its report.
    func reconcile(_ request: ReconcileRequest, completion: @escaping @Sendable (ReconcileReport) -> Void) {
        record.passes.enqueue { [self] done in
            runPass(request) { report in
                completion(report)
                done()
            }
        }
    }

    /// How far before a loss of the cluster server's data a recovery looks, for an app
    /// without a `reconcile` schedule (and so without an overlap of its own).
    static let defaultResetOverlap: Duration = .seconds(3600)

    /// Where a recovery after the cluster server lost its data starts: `lostSince` minus the
    /// overlap (UNIX ms).
    func recoveryStart(lostSince: Timestamp) -> Int64 {
        lostSince.milliseconds - (schedule?.overlap ?? Self.defaultResetOverlap).wholeMilliseconds
    }

    /// After the cluster server lost its data: one pass from `from` (`recoveryStart`), so
    /// what Apple holds of what was acknowledged and lost is stored and delivered again.
    func recover(from: Int64, completion: @escaping @Sendable (ReconcileReport) -> Void) {
        reconcile(ReconcileRequest(from: from), completion: completion)
    }

    // MARK: One pass

    private func runPass(_ request: ReconcileRequest, completion: @escaping @Sendable (ReconcileReport) -> Void) {
        let now = clock.now().milliseconds
        var report = ReconcileReport(startedAt: Timestamp(milliseconds: now))
        report.dryRun = request.dryRun
        report.windowEnd = now
        let window: (stored: Int64?, planned: Int64)
        do throws(ReconcileFailure) {
            window = try plan(request, now: now, into: &report)
        } catch {
            return finish(report, failure: error, completion: completion)
        }
        let query = NotificationHistoryQuery(startDate: report.windowStart, endDate: now, onlyFailures: request.onlyFailures)
        let fetch = WindowFetch(query: query, dryRun: request.dryRun,
                                deadline: report.startedAt.milliseconds + limits.maximumDuration.wholeMilliseconds,
                                report: report, counted: request.dryRun ? [] : nil)
        fetchWindow(fetch) { [self] fetched, failure in
            var failure = failure
            // The checkpoint says "everything before it was asked for": only a whole window
            // from it (or from as far back as can be asked) moves it, never backwards.
            let coversCheckpoint = fetched.report.windowStart <= window.planned || fetched.report.clamped != nil
            if failure == nil, !request.dryRun, !request.onlyFailures, coversCheckpoint, (window.stored ?? .min) < now {
                do throws(ReconcileFailure) {
                    try saveCheckpoint(now)
                } catch {
                    failure = error
                }
            }
            finish(fetched.report, failure: failure, completion: completion)
        }
    }

    /// The window a pass asks for, into `report`; the checkpoint it read and where a scheduled
    /// pass would start.
    private func plan(
        _ request: ReconcileRequest, now: Int64, into report: inout ReconcileReport
    ) throws(ReconcileFailure) -> (stored: Int64?, planned: Int64) {
        let stored: Int64?
        switch checkpoint.load() {
        case .missing: stored = nil
        case .saved(let value): stored = value
        case .unreadable(let why):
            throw ReconcileFailure("the checkpoint \(checkpoint.path) cannot be read (\(why)); fix or remove it")
        }
        let overlap = schedule?.overlap.wholeMilliseconds ?? 0
        guard request.since != nil || request.from != nil || stored != nil || schedule != nil else {
            throw ReconcileFailure("this app has no checkpoint and no reconcile schedule: give --since")
        }
        // What a scheduled pass asks for; a checkpoint moves only after a window reaching it.
        let planned = (stored ?? now) - overlap
        var start = request.from ?? request.since.map { now - $0.wholeMilliseconds } ?? planned
        // Apple has no older history; and a notification signed before the dedupe window
        // cannot be told from one already delivered, so the policy would only quarantine it
        // (ten minutes' margin: the pass takes time, the policy judges at its own now).
        let kept = now - Self.historyKept(environment)
        let remembered = now - dedupeWindow.wholeMilliseconds + 600_000
        if start < max(kept, remembered) {
            report.clamped = kept >= remembered
                ? "Apple keeps \(environment == .production ? 180 : 30) days of \(environment.rawValue) history"
                : "notifications signed before the \(ConfigFormat.duration(dedupeWindow)) dedupe-window cannot be told from ones already delivered"
            start = max(kept, remembered)
        }
        report.windowStart = min(start, now - 1)
        logger.info("reconciliation started", tagged([
            ("window.start", Timestamp(milliseconds: report.windowStart).iso8601), ("dry.run", request.dryRun ? "yes" : "no"),
        ]))
        return (stored, planned)
    }

    /// A window's pages so far: what they added to the report, the next page's token, and
    /// (a dry run) the ids already counted.
    private struct WindowFetch: Sendable {
        let query: NotificationHistoryQuery
        let dryRun: Bool
        /// UNIX milliseconds: no retry of a call to Apple starts after it.
        let deadline: Int64
        var report: ReconcileReport
        var token: String?
        /// A dry run stores nothing, so a window fetched again would count its first pages
        /// as recovered twice: it remembers what it counted.
        var counted: Set<String>?
    }

    /// Every page of the window, each stored before the next is asked for. An expired
    /// pagination token starts the window again: what was stored comes back as duplicates.
    /// A pass that reaches `limits` first fails, its checkpoint where it was.
    private func fetchWindow(_ fetch: WindowFetch, completion: @escaping @Sendable (WindowFetch, ReconcileFailure?) -> Void) {
        api.notificationHistory(fetch.query, paginationToken: fetch.token, deadline: fetch.deadline) { [self] result in
            record.queue.async { [self] in
                var fetch = fetch
                let page: NotificationHistoryPage
                switch result {
                case .success(let answer):
                    page = answer
                case .failure(let error):
                    if error.isPaginationTokenExpired, fetch.report.restarts < 3 {
                        fetch.report.restarts += 1
                        logger.warning("pagination token expired; fetching the window again", tagged([("page", fetch.report.pages)]))
                        fetch.token = nil
                        return fetchWindow(fetch, completion: completion)
                    }
                    return completion(fetch, ReconcileFailure("App Store Server API: \(error.message)"))
                }
                fetch.report.pages += 1
                take(page.items, fetch) { [self] taken, failure in
                    if let failure { return completion(taken, failure) }
                    guard page.hasMore, let next = page.paginationToken else { return completion(taken, nil) }
                    let pages = taken.report.pages
                    let elapsed = clock.now().milliseconds - taken.report.startedAt.milliseconds
                    if pages >= limits.maximumPages || elapsed >= limits.maximumDuration.wholeMilliseconds {
                        return completion(taken, ReconcileFailure("Apple kept answering hasMore: stopped after \(pages) pages in "
                            + "\(ConfigFormat.duration(.milliseconds(elapsed / 1000 * 1000))) (at most \(limits.maximumPages) pages or "
                            + "\(ConfigFormat.duration(limits.maximumDuration)) a pass); the checkpoint stays, so the next pass asks again"))
                    }
                    var following = taken
                    following.token = next
                    fetchWindow(following, completion: completion)
                }
            }
        }
    }

    /// Feeds one page to the intake and counts every answer once all are in. A notification
    /// the journal could not store fails the pass, so the checkpoint stays and the next pass
    /// asks again.
    private func take(
        _ items: [NotificationHistoryPage.Item], _ fetch: WindowFetch,
        completion: @escaping @Sendable (WindowFetch, ReconcileFailure?) -> Void
    ) {
        let outcomes = Locked<[IntakeOutcome]>([])
        let group = DispatchGroup()
        for item in items {
            group.enter()
            intake.recover(signedPayload: item.signedPayload, dryRun: fetch.dryRun) { outcome in
                outcomes.withLock { $0.append(outcome) }
                group.leave()
            }
        }
        group.notify(queue: record.queue) {
            var fetch = fetch
            fetch.report.found += items.count
            var unavailable: String?
            for outcome in outcomes.current {
                if case .accepted(let id) = outcome, fetch.counted?.insert(id).inserted == false {
                    fetch.report.alreadyHad += 1
                    continue
                }
                if case .quarantined(let id) = outcome, fetch.counted?.insert(id).inserted == false {
                    fetch.report.alreadyHad += 1
                    continue
                }
                switch outcome {
                case .accepted: fetch.report.recovered += 1
                case .duplicate: fetch.report.alreadyHad += 1
                case .quarantined: fetch.report.quarantined += 1
                case .rejected(.unavailable(let message)): unavailable = message
                case .rejected: fetch.report.failed += 1
                }
            }
            if let unavailable { return completion(fetch, ReconcileFailure("a recovered notification could not be stored: \(unavailable)")) }
            completion(fetch, nil)
        }
    }

    private func saveCheckpoint(_ value: Int64) throws(ReconcileFailure) {
        do {
            try checkpoint.save(value)
        } catch {
            throw ReconcileFailure("cannot save the checkpoint \(checkpoint.path): \(error)")
        }
    }

    /// Records and logs the pass, failed when `failure` says why, then hands it over.
    private func finish(
        _ report: ReconcileReport, failure: ReconcileFailure?, completion: @escaping @Sendable (ReconcileReport) -> Void
    ) {
        var report = report
        if let failure {
            report.outcome = .failed
            report.error = failure.message
        }
        report.finishedAt = clock.now()
        record.lastPass.withLock { $0 = report }
        if report.outcome == .success, !report.dryRun { record.lastSuccess.withLock { $0 = report.finishedAt } }
        metrics.reconciliationFinished(app: bundleId, environment: environment.rawValue, outcome: report.outcome.rawValue,
                                       recovered: report.dryRun ? 0 : report.recovered)
        var fields: Logger.Metadata = [
            ("outcome", report.outcome.rawValue), ("pages", report.pages), ("found", report.found),
            ("already.had", report.alreadyHad), ("recovered", report.recovered),
            ("quarantined", report.quarantined), ("failed", report.failed),
        ]
        if let clamped = report.clamped { fields.append(("clamped", clamped)) }
        if !report.dryRun { tellOperators(report) }
        if let error = report.error {
            fields.append(("error", error))
            logger.error("reconciliation failed", tagged(fields))
        } else {
            logger.info("reconciliation finished", tagged(fields))
        }
        completion(report)
    }

    /// `reconcile.failed`, or `reconcile.recovered` when the pass found notifications the
    /// gateway had missed (a pass that found none is the normal case, and says nothing).
    private func tellOperators(_ report: ReconcileReport) {
        let about: [(String, JSONValue)] = [("app", .string(bundleId)), ("environment", .string(environment.rawValue))]
        if report.outcome == .failed {
            operational.emit("reconcile.failed", about + [("error", .string(report.error ?? "unknown"))])
        } else if report.recovered > 0 {
            operational.emit("reconcile.recovered", about + [("count", .integer(Int64(report.recovered)))])
        }
    }

    /// `fields` after the app and environment every reconciliation line carries.
    func tagged(_ fields: Logger.Metadata) -> Logger.Metadata {
        let tags: Logger.Metadata = [("app", bundleId), ("environment", environment.rawValue)]
        return tags + fields
    }
}

/// How far one pass may go before it stops and is reported failed: an answer that says
/// `hasMore` forever (Apple's, or a proxy's or test double's in front of it) must not hold the
/// app's queue, nor call Apple, forever.
struct ReconcileLimits: Sendable {
    /// Two million notifications at Apple's 20 a page: more than 180 days of an app that
    /// receives 10,000 a day, the longest window Apple keeps.
    var maximumPages = 100_000
    /// Apple allows 50 history requests a second: even 100,000 pages, each stored before the
    /// next is asked for, take a few hours at most.
    var maximumDuration: Duration = .seconds(6 * 3600)
}

/// Why a pass stopped, in one sentence.
struct ReconcileFailure: Error {
    let message: String

    init(_ message: String) { self.message = message }
}
