import StoreRelayVerification
import StoreRelayCore
import Testing

/// One case per V1 `notification_type` Apple documents, plus the unknown-type rule.
@Suite("V1 type mapping")
struct V1MappingTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var v1: String
        var type: String
        var subtype: String?
        var top: [(String, JSONValue)] = []
        var pending: JSONValue = V1Bodies.pending()
        var testDescription: String { "\(v1) → \(type)/\(subtype ?? "-")" }
    }

    static let cases: [Case] = [
        Case(v1: "CANCEL", type: "REFUND", subtype: nil),
        Case(v1: "CONSUMPTION_REQUEST", type: "CONSUMPTION_REQUEST", subtype: nil),
        Case(v1: "DID_CHANGE_RENEWAL_PREF", type: "DID_CHANGE_RENEWAL_PREF", subtype: "DOWNGRADE",
             pending: V1Bodies.pending(autoRenewProductId: "monthly.basic")),
        Case(v1: "DID_CHANGE_RENEWAL_PREF", type: "DID_CHANGE_RENEWAL_PREF", subtype: nil),
        Case(v1: "DID_CHANGE_RENEWAL_STATUS", type: "DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_ENABLED",
             top: [("auto_renew_status", "true")]),
        Case(v1: "DID_CHANGE_RENEWAL_STATUS", type: "DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED",
             top: [("auto_renew_status", "false")]),
        Case(v1: "DID_CHANGE_RENEWAL_STATUS", type: "DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED",
             pending: V1Bodies.pending(autoRenewStatus: "0")),
        Case(v1: "DID_FAIL_TO_RENEW", type: "DID_FAIL_TO_RENEW", subtype: nil),
        Case(v1: "DID_FAIL_TO_RENEW", type: "DID_FAIL_TO_RENEW", subtype: "GRACE_PERIOD",
             pending: V1Bodies.pending(extra: [("grace_period_expires_date_ms", "1606300000000")])),
        Case(v1: "DID_RECOVER", type: "DID_RENEW", subtype: "BILLING_RECOVERY"),
        Case(v1: "DID_RENEW", type: "DID_RENEW", subtype: nil),
        Case(v1: "INITIAL_BUY", type: "SUBSCRIBED", subtype: "INITIAL_BUY"),
        Case(v1: "INTERACTIVE_RENEWAL", type: "SUBSCRIBED", subtype: "RESUBSCRIBE"),
        Case(v1: "PRICE_INCREASE_CONSENT", type: "PRICE_INCREASE", subtype: "PENDING",
             pending: V1Bodies.pending(extra: [("price_consent_status", "0")])),
        Case(v1: "PRICE_INCREASE_CONSENT", type: "PRICE_INCREASE", subtype: "ACCEPTED",
             pending: V1Bodies.pending(extra: [("price_consent_status", "1")])),
        Case(v1: "REFUND", type: "REFUND", subtype: nil),
        Case(v1: "RENEWAL", type: "DID_RENEW", subtype: "BILLING_RECOVERY"),
        Case(v1: "REVOKE", type: "REVOKE", subtype: nil),
        Case(v1: "SOMETHING_APPLE_ADDS_LATER", type: "SOMETHING_APPLE_ADDS_LATER", subtype: nil),
    ]

    @Test(arguments: cases)
    func mapsToTheV2TypeAndKeepsTheV1Name(_ c: Case) throws {
        let body = V1Bodies.bytes(V1Bodies.body(type: c.v1, pending: [c.pending], top: c.top))
        let event = try V1Notification.parse(body).normalized(receivedAt: fixedReceipt)
        #expect(event.type == c.type)
        #expect(event.subtype == c.subtype)
        #expect(event.legacyType == c.v1)
        let json = try event.parsed()
        #expect(json["type"] == .string(c.type))
        #expect(json["subtype"] == .string(c.subtype))
        #expect(json["legacyType"] == .string(c.v1))
        #expect(json["version"] == "1.0")
        #expect(json.objectValue?.keys == NormalizedEvent.keys)
    }

    /// V1 reports an upgrade as INTERACTIVE_RENEWAL: the replaced transaction says
    /// `is_upgraded` and is cancelled when the new one is bought. V2 says
    /// DID_CHANGE_RENEWAL_PREF/UPGRADE; an upgrade long past (the receipt keeps it) does not.
    @Test func anInteractiveRenewalThatUpgradesIsAnUpgrade() throws {
        let bought: Int64 = 1_606_292_762_000
        func body(cancelledMs: Int64) -> [UInt8] {
            guard case .object(var replaced) = V1Bodies.receipt(transactionId: "2", purchaseMs: bought - 86_400_000 * 30) else {
                return []
            }
            replaced["cancellation_date_ms"] = .string(String(cancelledMs))
            let latest = V1Bodies.receipt(transactionId: "3", productId: "annual", purchaseMs: bought)
            return V1Bodies.bytes(V1Bodies.body(type: "INTERACTIVE_RENEWAL", receipts: [latest, .object(replaced)]))
        }
        let upgrade = try V1Notification.parse(body(cancelledMs: bought)).normalized(receivedAt: fixedReceipt)
        #expect(upgrade.type == "DID_CHANGE_RENEWAL_PREF" && upgrade.subtype == "UPGRADE")
        #expect(upgrade.legacyType == "INTERACTIVE_RENEWAL")
        let resubscribe = try V1Notification.parse(body(cancelledMs: bought - 86_400_000 * 20)).normalized(receivedAt: fixedReceipt)
        #expect(resubscribe.type == "SUBSCRIBED" && resubscribe.subtype == "RESUBSCRIBE")
    }

    /// Apple's current documentation has CANCEL mean a refund by Apple Support (REFUND), but
    /// older V1 also sent CANCEL for the purchase an upgrade replaced: when the receipt marks
    /// that upgrade, CANCEL maps as INTERACTIVE_RENEWAL's upgrade does. A latest purchase that
    /// was itself cancelled is a refund, whatever it says about upgrades.
    @Test func aCancelThatUpgradesIsAnUpgrade() throws {
        let bought: Int64 = 1_606_292_762_000
        guard case .object(var replaced) = V1Bodies.receipt(transactionId: "2", purchaseMs: bought - 86_400_000 * 30) else {
            Issue.record("no receipt"); return
        }
        replaced["cancellation_date_ms"] = .string(String(bought))
        let latest = V1Bodies.receipt(transactionId: "3", productId: "annual", purchaseMs: bought)
        let upgrade = try V1Notification.parse(V1Bodies.bytes(V1Bodies.body(type: "CANCEL", receipts: [latest, .object(replaced)])))
            .normalized(receivedAt: fixedReceipt)
        #expect(upgrade.type == "DID_CHANGE_RENEWAL_PREF" && upgrade.subtype == "UPGRADE")
        #expect(upgrade.legacyType == "CANCEL")

        guard case .object(var refunded) = latest else { return }
        refunded["cancellation_date_ms"] = .string(String(bought + 3_600_000))
        refunded["cancellation_reason"] = "1"
        let refund = try V1Notification.parse(V1Bodies.bytes(V1Bodies.body(type: "CANCEL", receipts: [.object(refunded), .object(replaced)])))
            .normalized(receivedAt: fixedReceipt)
        #expect(refund.type == "REFUND" && refund.subtype == nil)
        let plain = try V1Notification.parse(V1Bodies.bytes(V1Bodies.body(type: "CANCEL", receipts: [.object(refunded)])))
            .normalized(receivedAt: fixedReceipt)
        #expect(plain.type == "REFUND" && plain.legacyType == "CANCEL")
    }

    @Test func everyDocumentedV1TypeIsCovered() {
        let documented: Set<String> = [
            "CANCEL", "CONSUMPTION_REQUEST", "DID_CHANGE_RENEWAL_PREF", "DID_CHANGE_RENEWAL_STATUS",
            "DID_FAIL_TO_RENEW", "DID_RECOVER", "DID_RENEW", "INITIAL_BUY", "INTERACTIVE_RENEWAL",
            "PRICE_INCREASE_CONSENT", "REFUND", "RENEWAL", "REVOKE",
        ]
        #expect(documented.isSubset(of: Set(Self.cases.map(\.v1))))
        // Each documented type changes name or gains a subtype somewhere, or maps to itself:
        // either way the event names a V2 type Apple documents.
        let v2Types: Set<String> = [
            "CONSUMPTION_REQUEST", "DID_CHANGE_RENEWAL_PREF", "DID_CHANGE_RENEWAL_STATUS", "DID_FAIL_TO_RENEW",
            "DID_RENEW", "PRICE_INCREASE", "REFUND", "REVOKE", "SUBSCRIBED",
        ]
        for c in Self.cases where documented.contains(c.v1) {
            #expect(v2Types.contains(c.type), "\(c.v1)")
        }
    }
}
