import StoreRelayCore

extension V1Notification {
    /// The normalized event: V1's type mapped to V2's (V1 name kept in `legacyType`),
    /// `transaction` and `renewal` taken from `unified_receipt` in V2's member names.
    ///
    /// V1 has no signing date, app Apple id or subscription status, so `signedDate`,
    /// `app.appAppleId` and `subscription.status` are null; `version` is "1.0". The body's
    /// `password` is never copied.
    public func normalized(receivedAt: Timestamp) -> NormalizedEvent {
        let receipt = latestReceiptEntry()
        let pending = pendingRenewalEntry(originalTransactionId: text(receipt?["original_transaction_id"])
            ?? text(body["original_transaction_id"]))
        let transaction = receipt.map(V1ReceiptFields.converted)
        let renewal = pending.map(V1ReceiptFields.converted)

        var facts = V1TypeMapping.Facts()
        facts.autoRenewEnabled = text(body["auto_renew_status"]).flatMap(V1ReceiptFields.flag)
            ?? text(pending?["auto_renew_status"]).flatMap(V1ReceiptFields.flag)
        facts.inGracePeriod = pending?["grace_period_expires_date_ms"].map { !$0.isNull } ?? false
        facts.productId = text(pending?["product_id"]) ?? text(receipt?["product_id"])
        facts.autoRenewProductId = text(pending?["auto_renew_product_id"]) ?? text(body["auto_renew_product_id"])
        facts.priceConsentStatus = text(pending?["price_consent_status"]).flatMap { Int64($0) }
        facts.upgraded = isUpgrade(latest: receipt)
        let (type, subtype) = V1TypeMapping.map(notificationType, facts: facts)

        var doc = EventDocument(id: eventID, version: "1.0", environment: environment, type: type,
                                subtype: subtype, legacyType: notificationType, receivedAt: receivedAt)
        doc.bundleId = .string(bundleId)
        doc.bundleVersion = .string(bundleVersion)
        let sources = [transaction, renewal].compactMap { $0 }
        doc.originalTransactionId = sources.lazy.compactMap { $0["originalTransactionId"] }.first
            ?? body["original_transaction_id"] ?? .null
        doc.productId = sources.lazy.compactMap { $0["productId"] }.first ?? .null
        doc.transaction = transaction.map(JSONValue.object) ?? .null
        doc.renewal = renewal.map(JSONValue.object) ?? .null
        doc.extra = unmapped()
        return NormalizedEvent(document: doc)
    }

    /// The top-level members the event has no key for (`auto_renew_status_change_date_ms`,
    /// `expiration_intent`, what Apple adds later), shaped as Apple sent them, as V2's
    /// unknown members are: nothing Apple sent is lost. The deprecated receipt objects count
    /// as carried when the transaction was read from them; `password` is never copied, at
    /// any depth (the shared secret may be echoed anywhere Apple or a proxy put it).
    private func unmapped() -> JSONValue {
        var carried: Set<String> = ["notification_type", "password", "environment", "bid", "bvrs",
                                    "unified_receipt", "original_transaction_id"]
        if body["unified_receipt"]?["latest_receipt_info"] == nil {
            carried.formUnion(["latest_receipt_info", "latest_expired_receipt_info"])
        }
        let extra = body.members.filter { !carried.contains($0.key) }
        return extra.isEmpty ? .null : V1Body.withoutPasswords(.object(JSONObject(extra)))
    }

    /// Whether the latest purchase upgraded the subscription: Apple then marks the transaction
    /// it replaced `is_upgraded` and cancels it at the moment of the new purchase. An old
    /// `is_upgraded` entry from a past upgrade (the receipt keeps its history) does not count,
    /// nor does a latest purchase that was itself cancelled: that is a refund.
    private func isUpgrade(latest: JSONObject?) -> Bool {
        guard let latest, text(latest["cancellation_date_ms"]) == nil,
              let purchased = text(latest["purchase_date_ms"]).flatMap({ Int64($0) }) else { return false }
        let subscription = text(latest["original_transaction_id"])
        return receiptEntries().contains { entry in
            guard text(entry["is_upgraded"]) == "true", text(entry["original_transaction_id"]) == subscription,
                  let cancelled = text(entry["cancellation_date_ms"]).flatMap({ Int64($0) }) else { return false }
            return abs(cancelled - purchased) <= 86_400_000
        }
    }

    /// The receipt entries: `unified_receipt.latest_receipt_info`, else the deprecated
    /// top-level `latest_receipt_info` / `latest_expired_receipt_info` objects.
    private func receiptEntries() -> [JSONObject] {
        if let entries = body["unified_receipt"]?["latest_receipt_info"]?.arrayValue {
            return entries.compactMap(\.objectValue)
        }
        return ["latest_receipt_info", "latest_expired_receipt_info"].compactMap { body[$0]?.objectValue }
    }

    /// The newest entry by `purchase_date_ms`, among those of the notification's
    /// `original_transaction_id` when the body names one and any entry matches; the first
    /// listed wins a tie, as Apple lists newest first.
    func latestReceiptEntry() -> JSONObject? {
        var entries = receiptEntries()
        if let wanted = text(body["original_transaction_id"]) {
            let matching = entries.filter { text($0["original_transaction_id"]) == wanted }
            if !matching.isEmpty { entries = matching }
        }
        var best: (entry: JSONObject, date: Int64)?
        for entry in entries {
            let date = text(entry["purchase_date_ms"]).flatMap { Int64($0) } ?? Int64.min
            if let current = best, date <= current.date { continue }
            best = (entry, date)
        }
        return best?.entry
    }

    /// The `pending_renewal_info` entry of `originalTransactionId`; with no id to match, the
    /// only entry when there is exactly one.
    func pendingRenewalEntry(originalTransactionId: String?) -> JSONObject? {
        let entries = (body["unified_receipt"]?["pending_renewal_info"]?.arrayValue ?? []).compactMap(\.objectValue)
        guard let originalTransactionId else { return entries.count == 1 ? entries[0] : nil }
        return entries.first { text($0["original_transaction_id"]) == originalTransactionId }
    }

    /// A string member, or a number's text: V1 writes most numbers as strings, not always.
    private func text(_ value: JSONValue?) -> String? {
        switch value {
        case .string(let s)?: return s
        case .number(let n)?: return n.text
        default: return nil
        }
    }
}
