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
final class ServerResets: Sendable {
    /// One loss, and how its recovery went so far.
    struct Entry: Sendable {
        var reset: ClusterEpoch.Reset
        /// Apps and environments asked of Apple, with the report once a pass finished.
        var recovery: [(app: String, environment: String, report: ReconcileReport?)]
        /// What cannot be recovered, in sentences.
        var unrecoverable: [String]
    }

    /// The newest losses kept for status.
    static let kept = 10

    private let entries = Locked<[Entry]>([])
    private let logger: Logger
    private let metrics: GatewayMetrics

    init(logger: Logger, metrics: GatewayMetrics) {
        self.logger = logger
        self.metrics = metrics
    }

    /// Handles one loss: `reconcilers` are the apps and environments with an `api-key`;
    /// `configuration` names the apps that have none.
    func handle(_ reset: ClusterEpoch.Reset, reconcilers: [Reconciler], configuration: GatewayConfiguration) {
        metrics.serverReset()
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
        let entry = Entry(reset: reset, recovery: reconcilers.map { ($0.bundleId, $0.environment.rawValue, nil) },
                          unrecoverable: unrecoverable)
        entries.withLock { entries in
            entries.append(entry)
            if entries.count > Self.kept { entries.removeFirst(entries.count - Self.kept) }
        }
        logger.error("cluster server lost its data: acknowledged notifications may be gone; asking Apple's Notification History", [
            ("cause", reset.cause.rawValue), ("epoch.previous", reset.previousEpoch), ("epoch", reset.epoch),
            ("lost.since", reset.lostSince.iso8601),
            ("reconciling", reconcilers.map { "\($0.bundleId)/\($0.environment.rawValue)" }.joined(separator: " ")),
            ("unrecoverable", unrecoverable.joined(separator: "; ")),
        ])
        for reconciler in reconcilers {
            reconciler.recover(lostSince: reset.lostSince) { [entries] report in
                entries.withLock { entries in
                    guard let index = entries.lastIndex(where: { $0.reset == reset }),
                          let slot = entries[index].recovery.firstIndex(where: {
                              $0.app == reconciler.bundleId && $0.environment == reconciler.environment.rawValue
                          })
                    else { return }
                    entries[index].recovery[slot].report = report
                }
            }
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
                        ("outcome", .string(recovery.report?.outcome.rawValue ?? "running")),
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
                        + (recovery.report.map { "\($0.outcome.rawValue), \($0.recovered) recovered" } ?? "running")
                }.joined(separator: "; ")
            return "The cluster server lost its data (\(entry.reset.cause.rawValue), noticed \(entry.reset.noticedAt.iso8601)): "
                + "what was acknowledged after \(entry.reset.lostSince.iso8601) may be gone. \(recovering). "
                + "Not recoverable: \(entry.unrecoverable.joined(separator: "; "))."
        }
    }
}
