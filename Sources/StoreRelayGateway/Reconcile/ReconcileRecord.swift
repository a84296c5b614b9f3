import Dispatch
import StoreRelayCore

/// What outlives one `Reconciler` of an app and environment: a reload replaces the
/// reconcilers, not this. Its queue keeps passes one at a time across the replacement (a new
/// pass waits for the old one to end), and its last outcomes keep `/api/status`, the page and
/// the last-success metric meaningful through a reload.
final class ReconcileRecord: Sendable {
    let queue: DispatchQueue
    /// Probes wait on Apple for up to minutes; they get a queue of their own, one at a time.
    let probeQueue: DispatchQueue
    let lastPass = Locked<ReconcileReport?>(nil)
    let lastSuccess = Locked<Timestamp?>(nil)
    let lastProbe = Locked<ProbeReport?>(nil)

    init(bundleId: String, environment: AppStoreEnvironment) {
        queue = DispatchQueue(label: "storerelay.reconcile.\(bundleId).\(environment.rawValue)")
        probeQueue = DispatchQueue(label: "storerelay.probe.\(bundleId).\(environment.rawValue)")
    }
}
