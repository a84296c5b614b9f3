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

    enum Stored {
        /// No file yet: a new install (the first pass starts one overlap back).
        case missing
        case saved(Int64)
        /// A file that does not read back: a pass must not guess over it, or a gap before
        /// it would be skipped unnoticed.
        case unreadable(String)
    }

    func load() -> Stored {
        guard PrivateFiles.exists(path) else { return .missing }
        let bytes: [UInt8]
        do {
            bytes = try PrivateFiles.readAll(path)
        } catch {
            return .unreadable("\(error)")
        }
        guard let value = (try? JSONValue.parse(bytes))?["checkpoint"]?.int64Value else {
            return .unreadable("not {\"checkpoint\": <UNIX ms>}")
        }
        return .saved(value)
    }

    func save(_ checkpoint: Int64) throws(SystemCallFailure) {
        let json = JSONValue.object(JSONObject([("checkpoint", .integer(checkpoint))]))
        try PrivateFiles.replaceFileDurably(path, json.serializedBytes())
    }
}
