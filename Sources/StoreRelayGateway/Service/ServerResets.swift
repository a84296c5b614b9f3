import Dispatch
import StoreRelayCluster
import StoreRelayConfig
import StoreRelayCore

/// What the gateway does when its cluster server lost its data (SPEC "Cluster mode on managed
/// and replicated servers"; `ClusterEpoch` notices it): count it, log it as an error, show it
/// in `/api/status` and on the page, and ask Apple's Notification History, for every app with
/// an `api-key`, for what was sent from before the loss. What Apple holds comes back through
/// the normal acceptance path: the lost copies are new again to the server, so they are
/// stored and delivered (those delivered before the loss are delivered again, with the same
/// `webhook-id`). Version 1 notifications are not in Apple's history: they are reported as
/// unrecoverable.
///
/// A recovery pass that fails (Apple unreachable, a 401, a server down) is tried again with
/// backoff, from the same moment, until one succeeds: the loss is not noticed a second time.
final class ServerResets: Sendable {
    /// One app and environment's recovery: the pass asked of Apple, from `from` (UNIX ms).
    struct Recovery: Sendable {
        var app: String
        var environment: String
        var from: Int64
        /// The last pass's report; nil while the first runs.
        var report: ReconcileReport?
        /// Passes run (or running) so far.
        var attempts = 1
        /// Whether a pass is running now.
        var running = true
        /// When the next pass runs, after a failed one.
        var retryAt: Timestamp?
    }

    /// One loss, and how its recovery went so far.
    struct Entry: Sendable {
        var reset: ClusterEpoch.Reset
        /// Apps and environments asked of Apple.
        var recovery: [Recovery]
        /// What cannot be recovered, in sentences.
        var unrecoverable: [String]
    }

    /// Runs one recovery pass of `app` in `environment` from `from` with the reconciler the
    /// gateway has now, `completion` getting its report; false when it has none any more (a
    /// reload removed the app, the gateway is stopping): the recovery ends there.
    typealias Pass = @Sendable (_ app: String, _ environment: String, _ from: Int64,
                                _ completion: @escaping @Sendable (ReconcileReport) -> Void) -> Bool

    /// The newest losses kept for status.
    static let kept = 10
    /// The wait before a failed pass is tried again, doubled each time up to `maximumRetryDelay`.
    static let firstRetryDelay: Duration = .seconds(30)
    static let maximumRetryDelay: Duration = .seconds(1800)

    private let entries = Locked<[Entry]>([])
    private let stopped = Locked(false)
    private let logger: Logger
    private let metrics: GatewayMetrics
    private let operational: OperationalEvents
    private let retryDelays: (first: Duration, maximum: Duration)
    private let timers = DispatchQueue(label: "storerelay.cluster.resets")

    init(logger: Logger, metrics: GatewayMetrics, operational: OperationalEvents = OperationalEvents(),
         retryDelays: (first: Duration, maximum: Duration) = (ServerResets.firstRetryDelay, ServerResets.maximumRetryDelay)) {
        self.operational = operational
        self.logger = logger
        self.metrics = metrics
        self.retryDelays = retryDelays
    }

    /// No pass is started or retried from now on.
    func stop() {
        stopped.withLock { $0 = true }
    }

    /// Handles one loss: `reconcilers` are the apps and environments with an `api-key`;
    /// `configuration` names the apps that have none; `pass` runs each recovery pass.
    func handle(_ reset: ClusterEpoch.Reset, reconcilers: [Reconciler], configuration: GatewayConfiguration, pass: @escaping Pass) {
        handle(reset, recovering: reconcilers.map {
            Recovery(app: $0.bundleId, environment: $0.environment.rawValue, from: $0.recoveryStart(lostSince: reset.lostSince))
        }, configuration: configuration, pass: pass)
    }

    func handle(_ reset: ClusterEpoch.Reset, recovering: [Recovery], configuration: GatewayConfiguration, pass: @escaping Pass) {
        metrics.serverReset()
        operational.emit("cluster.server_reset", [
            ("cause", .string(reset.cause.rawValue)), ("epoch", .string(reset.epoch)),
            ("previousEpoch", .string(reset.previousEpoch)), ("lostSince", .string(reset.lostSince.iso8601)),
        ])
        var unrecoverable = ["version 1 notifications acknowledged after \(reset.lostSince.iso8601) and not delivered "
            + "(Apple's Notification History holds only version 2): compare with what the destinations received"]
        let withoutKey = configuration.apps.filter { $0.apiKey == nil }.map(\.bundleId)
        if configuration.apps.isEmpty {
            unrecoverable.append("every notification acknowledged after \(reset.lostSince.iso8601) and not delivered: "
                + "no app is declared with an api-key, so nothing is asked of Apple")
        } else if !withoutKey.isEmpty {
            unrecoverable.append("notifications of \(withoutKey.joined(separator: ", ")) acknowledged after \(reset.lostSince.iso8601) "
                + "and not delivered: no api-key to ask Apple with")
        }
        let entry = Entry(reset: reset, recovery: recovering, unrecoverable: unrecoverable)
        entries.withLock { entries in
            entries.append(entry)
            if entries.count > Self.kept { entries.removeFirst(entries.count - Self.kept) }
        }
        logger.error("cluster server lost its data: acknowledged notifications may be gone; asking Apple's Notification History", [
            ("cause", reset.cause.rawValue), ("epoch.previous", reset.previousEpoch), ("epoch", reset.epoch),
            ("lost.since", reset.lostSince.iso8601),
            ("reconciling", recovering.map { "\($0.app)/\($0.environment)" }.joined(separator: " ")),
            ("unrecoverable", unrecoverable.joined(separator: "; ")),
        ])
        for recovery in recovering {
            run(recovery, of: reset, attempt: 1, pass: pass)
        }
    }

    /// Runs pass number `attempt` of `recovery`; a failed one is run again after a backoff.
    private func run(_ recovery: Recovery, of reset: ClusterEpoch.Reset, attempt: Int, pass: @escaping Pass) {
        guard !stopped.current else { return }
        let started = pass(recovery.app, recovery.environment, recovery.from) { [self] report in
            let delay = retryDelay(after: attempt)
            let retryAt = report.outcome == .failed ? Timestamp.now().advanced(by: delay) : nil
            update(recovery, of: reset) { $0.report = report; $0.attempts = attempt; $0.running = false; $0.retryAt = retryAt }
            guard report.outcome == .failed else { return }
            logger.warning("recovery after the cluster server lost its data failed; trying again", [
                ("app", recovery.app), ("environment", recovery.environment), ("error", report.error ?? ""),
                ("attempt", attempt), ("retry.in", ConfigFormat.duration(delay)),
            ])
            timers.asyncAfter(deadline: .now() + .milliseconds(Int(delay.wholeMilliseconds))) { [self] in
                update(recovery, of: reset) { $0.attempts = attempt + 1; $0.running = true; $0.retryAt = nil }
                run(recovery, of: reset, attempt: attempt + 1, pass: pass)
            }
        }
        if !started {
            logger.warning("recovery after the cluster server lost its data ends: the app is no longer reconciled here",
                           [("app", recovery.app), ("environment", recovery.environment)])
            update(recovery, of: reset) { $0.running = false; $0.retryAt = nil }
        }
    }

    private func retryDelay(after attempt: Int) -> Duration {
        let first = max(1, retryDelays.first.wholeMilliseconds)
        let doubled = first << Int64(min(attempt - 1, 20))
        return .milliseconds(min(max(first, retryDelays.maximum.wholeMilliseconds), doubled))
    }

    private func update(_ recovery: Recovery, of reset: ClusterEpoch.Reset, _ change: (inout Recovery) -> Void) {
        entries.withLock { entries in
            guard let index = entries.lastIndex(where: { $0.reset == reset }),
                  let slot = entries[index].recovery.firstIndex(where: { $0.app == recovery.app && $0.environment == recovery.environment })
            else { return }
            change(&entries[index].recovery[slot])
        }
    }

    /// `/api/status`'s `cluster.resets`, oldest first.
    var json: JSONValue {
        .array(entries.current.map { entry in
            .object(JSONObject([
                ("noticedAt", .string(entry.reset.noticedAt.iso8601)),
                ("cause", .string(entry.reset.cause.rawValue)),
                ("previousEpoch", .string(entry.reset.previousEpoch)),
                ("epoch", .string(entry.reset.epoch)),
                ("lostSince", .string(entry.reset.lostSince.iso8601)),
                ("recovery", .array(entry.recovery.map { recovery in
                    .object(JSONObject([
                        ("app", .string(recovery.app)), ("environment", .string(recovery.environment)),
                        ("outcome", .string(recovery.running ? "running" : recovery.report?.outcome.rawValue ?? "failed")),
                        ("attempts", .integer(Int64(recovery.attempts))),
                        ("nextAttemptAt", .string(recovery.retryAt?.iso8601)),
                        ("report", recovery.report?.json ?? .null),
                    ]))
                })),
                ("unrecoverable", .array(entry.unrecoverable.map { .string($0) })),
            ]))
        })
    }

    /// One sentence per loss, for the top of the admin page.
    var alerts: [String] {
        entries.current.map { entry in
            let recovering = entry.recovery.isEmpty
                ? "nothing could be asked of Apple (no app has an api-key)"
                : "recovery from Apple's Notification History: " + entry.recovery.map { recovery in
                    "\(recovery.app) \(recovery.environment) "
                        + (recovery.running ? "running" : recovery.retryAt.map { "failed, trying again at \($0.iso8601)" }
                            ?? recovery.report.map { "\($0.outcome.rawValue), \($0.recovered) recovered" } ?? "not run")
                }.joined(separator: "; ")
            return "The cluster server lost its data (\(entry.reset.cause.rawValue), noticed \(entry.reset.noticedAt.iso8601)): "
                + "what was acknowledged after \(entry.reset.lostSince.iso8601) may be gone. \(recovering). "
                + "Not recoverable: \(entry.unrecoverable.joined(separator: "; "))."
        }
    }
}
