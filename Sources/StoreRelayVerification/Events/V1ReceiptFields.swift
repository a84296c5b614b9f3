import StoreRelayCore

/// Renames a V1 receipt entry (`latest_receipt_info[]`, `pending_renewal_info[]`) to the
/// members of its V2 counterpart (JWSTransaction, JWSRenewalInfo), so consumers read one
/// shape whichever version Apple sent.
///
/// snake_case becomes camelCase (`web_order_line_item_id` → `webOrderLineItemId`), with the
/// few V1 names V2 changed renamed outright; `*_date_ms` strings become ISO-8601 under the
/// V2 date name, and their human-readable siblings (`purchase_date`, `purchase_date_pst`)
/// are dropped; strings that V2 (or V1 itself) types as numbers or booleans are converted
/// ("1" → 1, "false" → false). Members with no V2 counterpart keep their value under their
/// camelCase name.
enum V1ReceiptFields {
    /// V1 names whose V2 name is not their camelCase form.
    static let renamed: [String: String] = [
        "cancellation_date_ms": "revocationDate",
        "cancellation_reason": "revocationReason",
        "price_consent_status": "priceIncreaseStatus",
    ]
    /// V2 members typed as integers (V1 sends them as strings).
    static let integers: Set<String> = [
        "quantity", "revocationReason", "expirationIntent", "autoRenewStatus", "priceIncreaseStatus",
    ]
    /// Members typed as booleans, by V2 or by V1's own documentation (V1 sends them as
    /// "true"/"false" or "1"/"0").
    static let booleans: Set<String> = ["isUpgraded", "isInBillingRetryPeriod", "isTrialPeriod", "isInIntroOfferPeriod"]

    static func converted(_ entry: JSONObject) -> JSONObject {
        var out = JSONObject()
        for (key, value) in entry where key != "password" {
            if key.hasSuffix("_date_ms") {
                let name = renamed[key] ?? camelCase(String(key.dropLast(3)))
                out[name] = date(value)
            } else if let stem = readableDateStem(key), entry[stem + "_ms"] != nil {
                continue  // the _ms sibling carries the same instant exactly
            } else {
                let name = renamed[key] ?? camelCase(key)
                out[name] = typed(value, as: name)
            }
        }
        return out
    }

    /// `purchase_date` for `purchase_date` and `purchase_date_pst`; nil for other keys.
    private static func readableDateStem(_ key: String) -> String? {
        if key.hasSuffix("_date") { return key }
        if key.hasSuffix("_date_pst") { return String(key.dropLast(4)) }
        return nil
    }

    static func camelCase(_ snake: String) -> String {
        let parts = snake.split(separator: "_", omittingEmptySubsequences: true)
        guard let head = parts.first else { return snake }
        return String(head) + parts.dropFirst().map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
    }

    /// A V1 `*_date_ms` value (a string of digits, occasionally a number) as ISO-8601.
    static func date(_ value: JSONValue) -> JSONValue {
        if case .string(let text) = value, let number = JSONNumber(text: text) {
            let converted = AppleDates.iso8601(.number(number))
            return converted == .number(number) ? value : converted
        }
        return AppleDates.iso8601(value)
    }

    private static func typed(_ value: JSONValue, as name: String) -> JSONValue {
        guard case .string(let text) = value else { return value }
        if integers.contains(name) {
            if let integer = Int64(text) { return .number(JSONNumber(integer)) }
            if let flag = flag(text) { return .number(JSONNumber(Int64(flag ? 1 : 0))) }
        } else if booleans.contains(name), let flag = flag(text) {
            return .bool(flag)
        }
        return value
    }

    /// V1's spellings of a boolean: "true"/"false" and "1"/"0".
    static func flag(_ text: String) -> Bool? {
        switch text.lowercased() {
        case "true", "1": return true
        case "false", "0": return false
        default: return nil
        }
    }
}
