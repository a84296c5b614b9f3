import StoreRelayCore

/// Apple's date members and their conversion from milliseconds since the epoch to ISO-8601.
///
/// Apple writes every date as a JSON number of milliseconds, sometimes with a fraction
/// (Xcode's `1697679936711.0747`); downstreams get `2023-10-19T01:45:36.711Z`. Only the
/// members Apple documents as dates are converted, where Apple documents them (nested ones
/// too): a future member that merely looks like a date passes through untouched, because
/// guessing wrong would silently change a value a consumer relies on.
enum AppleDates {
    /// Where the dates of one object are: members by name, and objects (or arrays of them)
    /// nested under a member, with their own dates.
    struct Fields: Sendable {
        var keys: Set<String> = []
        /// Every member whose name ends in `Date` (`commitmentInfo`, whose members Apple
        /// names that way throughout).
        var everyMemberEndingInDate = false
        var nested: [String: Fields] = [:]
    }

    /// `commitmentInfo`, in transactions and renewal info alike.
    private static let commitmentInfo = Fields(everyMemberEndingInDate: true)

    /// JWSTransactionDecodedPayload, with Advanced Commerce's items and their refunds.
    static let transaction = Fields(
        keys: ["purchaseDate", "originalPurchaseDate", "expiresDate", "signedDate", "revocationDate"],
        nested: [
            "commitmentInfo": commitmentInfo,
            "advancedCommerceInfo": Fields(nested: [
                "items": Fields(keys: ["revocationDate"], nested: ["refunds": Fields(keys: ["refundDate"])]),
            ]),
        ])
    /// JWSRenewalInfoDecodedPayload.
    static let renewal = Fields(
        keys: ["signedDate", "recentSubscriptionStartDate", "renewalDate", "gracePeriodExpiresDate"],
        nested: ["commitmentInfo": commitmentInfo])
    /// JWSAppTransactionDecodedPayload.
    static let appTransaction = Fields(keys: ["receiptCreationDate", "originalPurchaseDate", "preorderDate", "signedDate"])
    /// externalPurchaseToken.
    static let externalPurchaseToken = Fields(keys: ["tokenCreationDate", "tokenExpirationDate"])

    /// The earliest and latest instants ISO-8601 can spell with a four-digit year; a number
    /// outside them is not a date Apple would send, so it is left as it is. Year 0000 is in:
    /// Xcode writes "no date" as 0000-12-30 (`-62135769600000`).
    private static let earliest: Int64 = -62_167_219_200_000  // 0000-01-01T00:00:00.000Z
    private static let latest: Int64 = 253_402_300_799_999  // 9999-12-31T23:59:59.999Z

    /// `value` as ISO-8601 when it is a number of milliseconds, else `value` unchanged.
    /// A fraction of a millisecond is dropped (floor), so an instant never moves forward.
    static func iso8601(_ value: JSONValue) -> JSONValue {
        guard case .number(let number) = value, let ms = milliseconds(number) else { return value }
        return .string(iso8601Text(milliseconds: ms))
    }

    /// Whole milliseconds of a JSON number, or nil when it is not a plausible instant.
    ///
    /// A plain decimal is cut at its point rather than read through `Double`: at today's
    /// instants a double is only good to a quarter of a microsecond, enough to turn
    /// `…123.9999` into `…124`.
    static func milliseconds(_ number: JSONNumber) -> Int64? {
        let text = number.text
        var ms: Int64
        if let exact = Int64(text) {
            ms = exact
        } else if let point = text.firstIndex(of: "."), !text.contains(where: { $0 == "e" || $0 == "E" }),
                  let whole = Int64(text[..<point]) {
            ms = whole
            let negative = text.hasPrefix("-")
            if negative, text[text.index(after: point)...].contains(where: { $0 != "0" }) {
                guard ms > Int64.min else { return nil }
                ms -= 1  // floor, not truncation, below the epoch
            }
        } else {
            let double = number.doubleValue.rounded(.down)
            guard double.isFinite, double >= Double(earliest), double <= Double(latest) else { return nil }
            ms = Int64(double)
        }
        return (earliest...latest).contains(ms) ? ms : nil
    }

    /// `value` with the dates `fields` names converted; an array has each element converted
    /// the same way; anything else passes through.
    static func converting(_ value: JSONValue, _ fields: Fields) -> JSONValue {
        switch value {
        case .object(var object):
            for key in object.keys {
                guard let member = object[key] else { continue }
                if fields.keys.contains(key) || (fields.everyMemberEndingInDate && key.hasSuffix("Date")) {
                    object[key] = iso8601(member)
                } else if let inner = fields.nested[key] {
                    object[key] = converting(member, inner)
                }
            }
            return .object(object)
        case .array(let elements):
            return .array(elements.map { converting($0, fields) })
        default:
            return value
        }
    }
}
