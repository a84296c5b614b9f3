import StoreRelayConfig
import StoreRelayGooglePlay
import StoreRelayStorage
import StoreRelayCore

extension Gateway {
    /// Applies a reloaded configuration (SIGHUP), then calls `completion` (with the error
    /// when it was rejected, and the old configuration stays). The caller has parsed and
    /// validated it, so an invalid file never gets here.
    ///
    /// New routes, apps, secrets, environments, trust roots and paths apply to notifications
    /// that arrive from now on; destinations whose definition did not change keep their queues
    /// and connections. Listeners, TLS and the data directory need a restart: a change to
    /// them is reported and otherwise ignored. Reloads run one at a time, off every request
    /// path; none holds a thread while retired destinations close.
    public func reload(_ new: GatewayConfiguration, completion: @escaping @Sendable (GatewayError?) -> Void = { _ in }) {
        reloads.enqueue { [self] done in
            apply(new) { error in
                completion(error)
                done()
            }
        }
    }

    private func apply(_ new: GatewayConfiguration, completion: @escaping @Sendable (GatewayError?) -> Void) {
        let old = configuration
        let needsRestart = Self.settingsNeedingRestart(old, new)
        if !needsRestart.isEmpty {
            logger.warning("reload: these settings apply only after a restart", [("settings", needsRestart.joined(separator: ", "))])
        }
        let processor: NotificationProcessor
        let reconciling: [Reconciler]
        let enrichments: [String: PlayEnrichment]
        do throws(GatewayError) {
            for destination in new.destinations {
                if case .file(let options) = destination.kind {
                    do {
                        try FileQueue.createDirectory(options.directory)
                    } catch {
                        throw GatewayError("destination \(destination.name): cannot create \(options.directory): \(error.message)")
                    }
                }
            }
            processor = NotificationProcessor(
                verifier: try Self.makeVerifier(new, clock: clock),
                // The store keeps the window it opened with until a restart; so does the policy.
                policy: AcceptancePolicy(new, dedupeWindow: store.dedupeWindow), routes: new.routes)
            reconciling = try reconcilers.prepare(new, dedupeWindow: store.dedupeWindow)
            enrichments = try play.prepareEnrichments(new)
        } catch {
            return completion(error)
        }
        delivery.reconfigure(new) { [self] error in
            if let error { return completion(GatewayError("cannot open the destinations: \(error)")) }
            intake.replace(processor: processor)
            play.replace(configuration: new, enrichments: enrichments)
            publicRoutes.withLock { $0 = Self.publicRoutes(configuration: new, intake: intake, play: play, store: store, stopping: stopping) }
            current.withLock { $0 = new }
            applyOperationalEvents(new, previous: old)
            metrics.seed(new)
            reconcilers.replace(with: reconciling, passNow: false)
            logger.info("configuration reloaded", [
                ("routes", new.routes.rules.count), ("destinations", new.destinations.count),
            ])
            for warning in new.warnings { logger.warning("configuration", [("warning", warning)]) }
            completion(nil)
        }
    }

    /// Settings that only take effect when the process starts again.
    static func settingsNeedingRestart(_ old: GatewayConfiguration, _ new: GatewayConfiguration) -> [String] {
        var changed: [String] = []
        if old.listen != new.listen { changed.append("listen") }
        if old.tls != new.tls { changed.append("tls") }
        if old.admin != new.admin { changed.append("admin") }
        if old.adminToken != new.adminToken { changed.append("admin-token") }
        if old.trustedProxies != new.trustedProxies { changed.append("trusted-proxy") }
        if old.dataDirectory != new.dataDirectory { changed.append("data") }
        if old.maxBodySize != new.maxBodySize { changed.append("max-body") }
        if old.readTimeout != new.readTimeout { changed.append("read-timeout") }
        if old.headerTimeout != new.headerTimeout { changed.append("header-timeout") }
        if old.minBodyRate != new.minBodyRate { changed.append("min-body-rate") }
        if old.idleTimeout != new.idleTimeout { changed.append("idle-timeout") }
        if old.maxConnections != new.maxConnections { changed.append("max-connections") }
        if old.maxConnectionsPerAddress != new.maxConnectionsPerAddress { changed.append("max-connections-per-address") }
        if old.dedupeWindow != new.dedupeWindow { changed.append("dedupe-window") }
        if old.recentEvents != new.recentEvents { changed.append("recent-events") }
        if old.eventLogRetention != new.eventLogRetention { changed.append("event-log") }
        if old.cluster != new.cluster { changed.append("cluster") }
        if old.tracing != new.tracing { changed.append("tracing") }
        return changed
    }
}
