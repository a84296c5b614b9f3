/// The V2 type and subtype of each V1 `notification_type`, following Apple's descriptions of
/// both versions (App Store Server Notifications, `notification_type` and `notificationType`).
///
/// Some V1 types carry their V2 subtype in other members of the body (the renewal status,
/// the grace period), so an entry names a rule rather than a fixed subtype.
struct V1TypeMapping: Sendable, Hashable {
    /// How the V2 subtype is found.
    enum Subtype: Sendable, Hashable {
        /// No subtype.
        case none
        case fixed(String)
        /// AUTO_RENEW_ENABLED / AUTO_RENEW_DISABLED from `auto_renew_status`.
        case autoRenewStatus
        /// GRACE_PERIOD when the renewal info has a grace period expiry, else none.
        case gracePeriod
        /// DOWNGRADE when the next renewal is to another product, else none (the customer
        /// went back to the current product, which V2 sends without a subtype).
        case renewalPreference
        /// ACCEPTED when `price_consent_status` is 1, else PENDING.
        case priceConsent
    }

    let type: String
    let subtype: Subtype

    /// One entry per V1 type Apple documents.
    static let table: [String: V1TypeMapping] = [
        // Apple's current documentation: Apple Support refunded a subscription, which V2
        // reports as REFUND. Older V1 also sent CANCEL for an upgrade, which cancels the
        // replaced purchase at once; `map` maps that one as INTERACTIVE_RENEWAL's upgrade.
        "CANCEL": .init(type: "REFUND", subtype: .none),
        "CONSUMPTION_REQUEST": .init(type: "CONSUMPTION_REQUEST", subtype: .none),
        // A plan change effective at the next renewal: V2's DOWNGRADE (or none when undone).
        "DID_CHANGE_RENEWAL_PREF": .init(type: "DID_CHANGE_RENEWAL_PREF", subtype: .renewalPreference),
        "DID_CHANGE_RENEWAL_STATUS": .init(type: "DID_CHANGE_RENEWAL_STATUS", subtype: .autoRenewStatus),
        "DID_FAIL_TO_RENEW": .init(type: "DID_FAIL_TO_RENEW", subtype: .gracePeriod),
        // An expired subscription that failed to renew was recovered by billing.
        "DID_RECOVER": .init(type: "DID_RENEW", subtype: .fixed("BILLING_RECOVERY")),
        "DID_RENEW": .init(type: "DID_RENEW", subtype: .none),
        "INITIAL_BUY": .init(type: "SUBSCRIBED", subtype: .fixed("INITIAL_BUY")),
        // The customer renewed interactively: resubscribed, or upgraded (see `map`).
        "INTERACTIVE_RENEWAL": .init(type: "SUBSCRIBED", subtype: .fixed("RESUBSCRIBE")),
        "PRICE_INCREASE_CONSENT": .init(type: "PRICE_INCREASE", subtype: .priceConsent),
        "REFUND": .init(type: "REFUND", subtype: .none),
        // Deprecated by Apple in favour of DID_RECOVER, with the same meaning.
        "RENEWAL": .init(type: "DID_RENEW", subtype: .fixed("BILLING_RECOVERY")),
        "REVOKE": .init(type: "REVOKE", subtype: .none),
    ]

    /// What decides the rule-based subtypes, read from the body by the caller.
    struct Facts: Sendable {
        /// Top-level `auto_renew_status`, else the renewal info's.
        var autoRenewEnabled: Bool?
        var inGracePeriod = false
        var productId: String?
        var autoRenewProductId: String?
        var priceConsentStatus: Int64?
        /// A receipt entry of this subscription says `is_upgraded`: the customer moved to a
        /// higher level of service, which takes effect at once.
        var upgraded = false
    }

    /// The V2 type and subtype of `v1Type`; an undocumented type passes through as itself,
    /// without a subtype, so a new Apple type is delivered rather than lost.
    static func map(_ v1Type: String, facts: Facts) -> (type: String, subtype: String?) {
        guard let entry = table[v1Type] else { return (v1Type, nil) }
        // V1 reports an upgrade as INTERACTIVE_RENEWAL (and, in older bodies, CANCEL of the
        // replaced purchase); V2 as DID_CHANGE_RENEWAL_PREF/UPGRADE. A refund is no upgrade.
        if (v1Type == "INTERACTIVE_RENEWAL" || v1Type == "CANCEL") && facts.upgraded {
            return ("DID_CHANGE_RENEWAL_PREF", "UPGRADE")
        }
        return (entry.type, entry.subtype(facts))
    }

    private func subtype(_ facts: Facts) -> String? {
        switch subtype {
        case .none:
            return nil
        case .fixed(let name):
            return name
        case .autoRenewStatus:
            return facts.autoRenewEnabled.map { $0 ? "AUTO_RENEW_ENABLED" : "AUTO_RENEW_DISABLED" }
        case .gracePeriod:
            return facts.inGracePeriod ? "GRACE_PERIOD" : nil
        case .renewalPreference:
            guard let next = facts.autoRenewProductId, let current = facts.productId else { return nil }
            return next == current ? nil : "DOWNGRADE"
        case .priceConsent:
            return facts.priceConsentStatus == 1 ? "ACCEPTED" : "PENDING"
        }
    }
}
