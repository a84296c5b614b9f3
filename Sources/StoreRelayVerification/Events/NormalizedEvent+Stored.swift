import StoreRelayCore

extension NormalizedEvent {
    /// An event read back from its stored JSON (`jsonBytes()`), e.g. from the journal or a
    /// dead letter after a restart. `raw` is reset to null: Apple's body is stored apart.
    ///
    /// Only the routing fields are checked; the rest is kept as stored, so an event written
    /// by an older or newer StoreRelay still round-trips.
    public init(storedJSON bytes: [UInt8]) throws(EventError) {
        let value: JSONValue
        do {
            value = try JSONValue.parse(bytes, maxDepth: 96)
        } catch {
            throw .malformed(error)
        }
        guard case .object(let object) = value else {
            throw EventError(.notAnObject, "a stored event must be a JSON object")
        }
        try self.init(storedObject: object)
    }

    /// An event from a stored record already parsed (a journal record, say), without
    /// serializing and parsing it once more.
    public init(storedObject: JSONObject) throws(EventError) {
        var object = storedObject
        guard let id = object["id"]?.stringValue else { throw .missing("id", "a string") }
        guard let type = object["type"]?.stringValue else { throw .missing("type", "a string") }
        // Null only in a quarantined notification whose environment could not be read.
        let environment: AppStoreEnvironment?
        switch object["environment"] {
        case .null?:
            environment = nil
        case .string(let name)?:
            guard let known = AppStoreEnvironment(appleName: name) else {
                throw EventError(.unknownEnvironment, "`environment` \"\(name)\" is not an App Store environment")
            }
            environment = known
        default:
            throw .missing("environment", "a string")
        }
        if object["raw"] != nil { object["raw"] = .null }
        self.init(
            id: id,
            environment: environment,
            type: type,
            subtype: object["subtype"]?.stringValue,
            legacyType: object["legacyType"]?.stringValue,
            bundleId: object["app"]?["bundleId"]?.stringValue,
            verified: object["verified"]?.boolValue,
            json: object
        )
    }
}
