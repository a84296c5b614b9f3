import StoreRelayCore

extension NormalizedEvent {
    /// The normalized event of a verified V2 notification.
    ///
    /// Everything Apple sent is kept: the transaction, renewal, summary, external purchase
    /// token and app transaction pass through member for member (unknown members included),
    /// with only Apple's documented date members turned into ISO-8601. Unknown notification
    /// types and subtypes pass through as they are.
    ///
    /// - Parameter receivedAt: when the gateway received the body (injected for tests).
    /// - Throws: `EventError` with `.missingField` when `notificationUUID` or
    ///   `notificationType` is absent: without them there is no identity to deduplicate on
    ///   and nothing to route by.
    public init(content: NotificationContent, receivedAt: Timestamp) throws(EventError) {
        let payload = content.payload
        guard let id = payload["notificationUUID"]?.stringValue else {
            throw .missing("notificationUUID", "a string")
        }
        guard let type = payload["notificationType"]?.stringValue else {
            throw .missing("notificationType", "a string")
        }
        var doc = EventDocument(
            id: id,
            version: payload["version"]?.stringValue ?? "2.0",
            environment: content.environment,
            type: type,
            subtype: payload["subtype"]?.stringValue,
            legacyType: nil,
            receivedAt: receivedAt
        )
        doc.signedDate = payload["signedDate"].map(AppleDates.iso8601) ?? .null
        doc.verified = content.verified
        doc.recoveredBy = content.recoveredBy

        let containers = content.appContainers
        func first(_ key: String, in objects: [JSONObject]) -> JSONValue {
            for object in objects {
                if let value = object[key], !value.isNull { return value }
            }
            return .null
        }
        let nested = [content.transaction, content.appTransaction].compactMap { $0?.objectValue }
        doc.bundleId = first("bundleId", in: containers + nested)
        doc.appAppleId = first("appAppleId", in: containers)
        doc.bundleVersion = first("bundleVersion", in: containers)

        let subscriptionSources = [content.transaction, content.renewal].compactMap { $0?.objectValue }
        doc.originalTransactionId = first("originalTransactionId", in: subscriptionSources)
        let summary = payload["summary"]?.objectValue.map { [$0] } ?? []
        doc.productId = first("productId", in: subscriptionSources + summary)
        doc.status = payload["data"]?["status"] ?? .null

        doc.transaction = content.transaction.map { AppleDates.converting($0, AppleDates.transaction) } ?? .null
        doc.renewal = content.renewal.map { AppleDates.converting($0, AppleDates.renewal) } ?? .null
        doc.appTransaction = content.appTransaction.map {
            AppleDates.converting($0, AppleDates.appTransaction)
        } ?? .null
        doc.summary = payload["summary"] ?? .null
        doc.externalPurchaseToken = payload["externalPurchaseToken"].map {
            AppleDates.converting($0, AppleDates.externalPurchaseToken)
        } ?? .null
        doc.consumptionRequestReason = payload["data"]?["consumptionRequestReason"] ?? .null
        doc.extra = Self.unmapped(payload)
        self.init(document: doc)
    }

    /// The members of a payload, `data` and `appData` that the event has no key for: ones
    /// Apple adds before StoreRelay learns them. They travel in `extra`, shaped as Apple sent
    /// them (`{"newMember": 1, "data": {"newDataMember": 2}}`), so nothing signed is lost.
    static func unmapped(_ payload: JSONObject) -> JSONValue {
        var extra = payload.members.filter { !UnmappedMembers.payload.contains($0.key) }
        for (container, known) in [("data", UnmappedMembers.data), ("appData", UnmappedMembers.appData)] {
            guard let object = payload[container]?.objectValue else { continue }
            let unknown = object.members.filter { !known.contains($0.key) }
            if !unknown.isEmpty { extra.append((container, .object(JSONObject(unknown)))) }
        }
        return extra.isEmpty ? .null : .object(JSONObject(extra))
    }
}

/// The members Apple documents, which the event carries under keys of its own.
private enum UnmappedMembers {
    static let payload: Set<String> = [
        "notificationType", "subtype", "notificationUUID", "version", "signedDate",
        "data", "summary", "externalPurchaseToken", "appData",
    ]
    static let data: Set<String> = [
        "appAppleId", "bundleId", "bundleVersion", "environment", "status", "consumptionRequestReason",
        "signedTransactionInfo", "signedRenewalInfo", "signedAppTransactionInfo",
    ]
    static let appData: Set<String> = ["appAppleId", "bundleId", "environment", "signedAppTransactionInfo"]
}
