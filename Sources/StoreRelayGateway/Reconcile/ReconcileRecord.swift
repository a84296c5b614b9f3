import Dispatch
import StoreRelayCore

/// What outlives one `Reconciler` of an app and environment: a reload replaces the
/// reconcilers, not this. Its line of passes keeps them one at a time across the replacement
/// (a new pass waits for the old one to end), and its last outcomes keep `/api/status`, the
/// page and the last-success metric meaningful through a reload.
final class ReconcileRecord: Sendable {
    /// Where a pass's steps run, between its calls to Apple and to the intake.
    let queue: DispatchQueue
    /// Passes, one at a time.
    let passes: OneAtATime
    /// Probes wait on Apple for up to minutes; they get a line of their own, one at a time.
    let probeQueue: DispatchQueue
    let probes: OneAtATime
    let lastPass = Locked<ReconcileReport?>(nil)
    let lastSuccess = Locked<Timestamp?>(nil)
    let lastProbe = Locked<ProbeReport?>(nil)

    init(bundleId: String, environment: AppStoreEnvironment) {
        queue = DispatchQueue(label: "storerelay.reconcile.\(bundleId).\(environment.rawValue)")
        passes = OneAtATime(queue: queue)
        probeQueue = DispatchQueue(label: "storerelay.probe.\(bundleId).\(environment.rawValue)")
        probes = OneAtATime(queue: probeQueue)
    }
}
