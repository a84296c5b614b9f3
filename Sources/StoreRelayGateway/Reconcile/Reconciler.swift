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
/// Passes run one at a time on the reconciler's own queue — the scheduled ones every
/// `reconcile every`, and those `storerelay reconcile` asks for — and block only that queue
/// while Apple answers. The checkpoint advances only once a window's last page is stored.
final class Reconciler: Sendable {
    let bundleId: String
    let environment: AppStoreEnvironment
    let api: AppStoreServerAPI
    private let schedule: ReconcileSchedule?
    private let checkpoint: ReconcileCheckpoint
    private let intake: NotificationIntake
    let journal: Journal
    private let dedupeWindow: Duration
    let clock: any TimeSource
    let logger: Logger
    private let metrics: GatewayMetrics
    private let queue: DispatchQueue
    /// Probes wait on Apple for up to minutes; they get a queue of their own, one at a time.
    let probeQueue: DispatchQueue
    private let timer = Locked<(any DispatchSourceTimer)?>(nil)
    /// The last pass and probe, for `/api/status` and the page.
    let lastPass = Locked<ReconcileReport?>(nil)
    let lastSuccess = Locked<Timestamp?>(nil)
    let lastProbe = Locked<ProbeReport?>(nil)

    /// Apple keeps 180 days of production history and 30 of sandbox; an hour's margin keeps
    /// a slow clock from asking for a day Apple no longer has.
    static func historyKept(_ environment: AppStoreEnvironment) -> Int64 {
        (environment == .production ? 180 : 30) * 86_400_000 - 3_600_000
    }

    init(bundleId: String, environment: AppStoreEnvironment, api: AppStoreServerAPI, schedule: ReconcileSchedule?,
         directory: String, intake: NotificationIntake, journal: Journal, dedupeWindow: Duration,
         clock: any TimeSource, logger: Logger, metrics: GatewayMetrics) {
        self.bundleId = bundleId
        self.environment = environment
        self.api = api
        self.schedule = schedule
        checkpoint = ReconcileCheckpoint(directory: directory, bundleId: bundleId, environment: environment)
        self.intake = intake
        self.journal = journal
        self.dedupeWindow = dedupeWindow
        self.clock = clock
        self.logger = logger
        self.metrics = metrics
        queue = DispatchQueue(label: "storerelay.reconcile.\(bundleId).\(environment.rawValue)")
        probeQueue = DispatchQueue(label: "storerelay.probe.\(bundleId).\(environment.rawValue)")
    }

    /// Starts the schedule, when there is one: a first pass at once (a restart is when
    /// something is most likely to have been missed), then one every `reconcile every`.
    func start() {
        guard let schedule else { return }
        let source = DispatchSource.makeTimerSource(queue: queue)
        source.schedule(deadline: .now() + .milliseconds(200), repeating: .milliseconds(Int(schedule.every.wholeMilliseconds)))
        source.setEventHandler { [self] in _ = runPass(ReconcileRequest()) }
        timer.withLock { $0 = source }
        source.resume()
    }

    /// Stops the schedule and cuts short any wait for Apple; a pass in progress ends at its
    /// next call without moving the checkpoint.
    func stop() {
        timer.withLock { timer in
            timer?.cancel()
            timer = nil
        }
        api.cancel()
    }

    /// Runs one pass after any pass in progress, then calls `completion` with its report.
    func reconcile(_ request: ReconcileRequest, completion: @escaping @Sendable (ReconcileReport) -> Void) {
        queue.async { [self] in completion(runPass(request)) }
    }

    // MARK: One pass

    private func runPass(_ request: ReconcileRequest) -> ReconcileReport {
        let now = clock.now().milliseconds
        var report = ReconcileReport(startedAt: Timestamp(milliseconds: now))
        report.dryRun = request.dryRun
        report.windowEnd = now
        let overlap = schedule?.overlap.wholeMilliseconds ?? 0
        var start = request.since.map { now - $0.wholeMilliseconds } ?? ((checkpoint.load() ?? now) - overlap)
        // Apple has no older history; and a notification signed before the dedupe window
        // cannot be told from one already delivered, so the policy would only quarantine it.
        let kept = now - Self.historyKept(environment)
        let remembered = now - dedupeWindow.wholeMilliseconds
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
        do {
            try fetchWindow(NotificationHistoryQuery(startDate: report.windowStart, endDate: now, onlyFailures: request.onlyFailures),
                            dryRun: request.dryRun, into: &report)
            if !request.dryRun {
                // Never backwards: a manual pass over an older window leaves a later checkpoint.
                if (checkpoint.load() ?? .min) < now { try saveCheckpoint(now) }
            }
        } catch {
            report.outcome = .failed
            report.error = error.message
        }
        report.finishedAt = clock.now()
        finish(report)
        return report
    }

    /// Every page of `query`, each stored before the next is asked for. An expired
    /// pagination token starts the window again: what was stored comes back as duplicates.
    private func fetchWindow(_ query: NotificationHistoryQuery, dryRun: Bool, into report: inout ReconcileReport) throws(ReconcileFailure) {
        var token: String?
        while true {
            let page: NotificationHistoryPage
            do {
                page = try api.notificationHistory(query, paginationToken: token)
            } catch {
                if error.isPaginationTokenExpired, report.restarts < 3 {
                    report.restarts += 1
                    logger.warning("pagination token expired; fetching the window again", tagged([("page", String(report.pages))]))
                    token = nil
                    continue
                }
                throw ReconcileFailure("App Store Server API: \(error.message)", unauthorized: error.kind == .unauthorized)
            }
            report.pages += 1
            try take(page.items, dryRun: dryRun, into: &report)
            guard page.hasMore, let next = page.paginationToken else { return }
            token = next
        }
    }

    /// Feeds one page to the intake and waits for every answer. A notification the journal
    /// could not store fails the pass, so the checkpoint stays and the next pass asks again.
    private func take(_ items: [NotificationHistoryPage.Item], dryRun: Bool, into report: inout ReconcileReport) throws(ReconcileFailure) {
        let outcomes = Locked<[IntakeOutcome]>([])
        let group = DispatchGroup()
        for item in items {
            group.enter()
            intake.recover(signedPayload: item.signedPayload, dryRun: dryRun) { outcome in
                outcomes.withLock { $0.append(outcome) }
                group.leave()
            }
        }
        group.wait()
        report.found += items.count
        var unavailable: String?
        for outcome in outcomes.current {
            switch outcome {
            case .accepted: report.recovered += 1
            case .duplicate: report.alreadyHad += 1
            case .quarantined: report.quarantined += 1
            case .rejected(.unavailable(let message)): unavailable = message
            case .rejected: report.failed += 1
            }
        }
        if let unavailable { throw ReconcileFailure("a recovered notification could not be stored: \(unavailable)") }
    }

    private func saveCheckpoint(_ value: Int64) throws(ReconcileFailure) {
        do {
            try checkpoint.save(value)
        } catch {
            throw ReconcileFailure("cannot save the checkpoint \(checkpoint.path): \(error)")
        }
    }

    private func finish(_ report: ReconcileReport) {
        lastPass.withLock { $0 = report }
        if report.outcome == .success, !report.dryRun { lastSuccess.withLock { $0 = report.finishedAt } }
        metrics.reconciliationFinished(app: bundleId, environment: environment.rawValue, outcome: report.outcome.rawValue,
                                       recovered: report.dryRun ? 0 : report.recovered)
        var fields: [(String, String)] = [
            ("outcome", report.outcome.rawValue), ("pages", String(report.pages)), ("found", String(report.found)),
            ("already.had", String(report.alreadyHad)), ("recovered", String(report.recovered)),
            ("quarantined", String(report.quarantined)), ("failed", String(report.failed)),
        ]
        if let clamped = report.clamped { fields.append(("clamped", clamped)) }
        if let error = report.error {
            fields.append(("error", error))
            logger.error("reconciliation failed", tagged(fields))
        } else {
            logger.info("reconciliation finished", tagged(fields))
        }
    }

    /// `fields` after the app and environment every reconciliation line carries.
    func tagged(_ fields: Logger.Metadata) -> Logger.Metadata {
        [("app", bundleId), ("environment", environment.rawValue)] + fields
    }
}

/// Why a pass stopped, in one sentence.
struct ReconcileFailure: Error {
    let message: String
    /// Apple refused the credentials: nothing will change until an operator fixes them.
    let unauthorized: Bool

    init(_ message: String, unauthorized: Bool = false) {
        self.message = message
        self.unauthorized = unauthorized
    }
}
