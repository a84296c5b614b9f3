import StoreRelayCore

extension AppStoreEnvironment {
    /// The environment a decoded V2 notification payload declares, the way Apple's own
    /// libraries read it.
    ///
    /// Apple puts it in whichever container the notification type uses: `data`, `summary`
    /// (RENEWAL_EXTENSION/SUMMARY), `externalPurchaseToken` (which has no environment member:
    /// sandbox tokens are the ones whose `externalPurchaseId` starts with `SANDBOX`) or
    /// `appData` (RESCIND_CONSENT). The first container present decides; nil when none is, or
    /// when it names an environment Apple does not document.
    ///
    /// Reads only JSON, so the verifier (AppStore) may use it without the event model.
    public static func environment(ofPayload payload: JSONObject) -> AppStoreEnvironment? {
        if let data = payload["data"]?.objectValue {
            return named(data["environment"])
        }
        if let summary = payload["summary"]?.objectValue {
            return named(summary["environment"])
        }
        if let token = payload["externalPurchaseToken"]?.objectValue {
            let id = token["externalPurchaseId"]?.stringValue ?? ""
            return id.hasPrefix("SANDBOX") ? .sandbox : .production
        }
        if let appData = payload["appData"]?.objectValue {
            return named(appData["environment"])
        }
        return nil
    }

    /// The same, for a payload still wrapped in a `JSONValue`; nil when it is not an object.
    public static func environment(ofPayload payload: JSONValue) -> AppStoreEnvironment? {
        payload.objectValue.flatMap { environment(ofPayload: $0) }
    }

    private static func named(_ value: JSONValue?) -> AppStoreEnvironment? {
        value?.stringValue.flatMap { AppStoreEnvironment(appleName: $0) }
    }
}
