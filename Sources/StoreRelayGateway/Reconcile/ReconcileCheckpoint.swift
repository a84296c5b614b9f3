import StoreRelayCore

/// Where one app and environment's reconciliation stands on disk:
/// `data/reconcile/<bundle id>.<environment>.json` (0600), `{"checkpoint": <UNIX ms>}`.
///
/// The checkpoint is the end of the last window whose every page was stored. It is written
/// (fsync'ed, then renamed) only after that, so a crash anywhere in a pass leaves the previous
/// one, and the next pass fetches again from it minus the overlap: at worst the overlap and
/// the unfinished pass come twice, and the journal answers those as duplicates.
struct ReconcileCheckpoint: Sendable {
    let path: String

    init(directory: String, bundleId: String, environment: AppStoreEnvironment) {
        path = directory + "/" + bundleId + "." + environment.rawValue + ".json"
    }

    /// The stored checkpoint; nil when there is none yet, or the file cannot be read (the
    /// first pass then starts one overlap back, as on a new install).
    func load() -> Int64? {
        guard let bytes = try? PrivateFiles.readAll(path), let json = try? JSONValue.parse(bytes) else { return nil }
        return json["checkpoint"]?.int64Value
    }

    func save(_ checkpoint: Int64) throws(SystemCallFailure) {
        let json = JSONValue.object(JSONObject([("checkpoint", .integer(checkpoint))]))
        try PrivateFiles.replaceFileDurably(path, json.serializedBytes())
    }
}
