import StoreRelayDelivery
import StoreRelayCore

/// One event's attempts at one destination, kept on the server between attempts (the
/// `progress:<destination>` hash) so whichever instance tries next knows the budget spent:
/// `{"attempts":[...],"budgetStart":ms,"attemptsBefore":n,"replayOf":id,"redelivery":true}`
/// (`redelivery` only when set).
struct ClusterProgress: Sendable, Equatable {
    var attempts: [DeliveryAttempt] = []
    /// `max-age` runs from here: acceptance, or the replay that gave a fresh budget.
    var budgetStart: Timestamp
    /// Attempts made before the budget started (by the delivery a replay took over).
    var attemptsBefore = 0
    /// The dead letter this delivery replays; it leaves the store once delivered.
    var replayOf: String?
    /// An operator's redelivery of an event delivered already (`StoreRelay-Redelivery: 1`).
    var redelivery = false

    init(budgetStart: Timestamp) {
        self.budgetStart = budgetStart
    }

    init?(_ bytes: [UInt8]) {
        guard let json = try? JSONValue.parse(bytes), let start = json["budgetStart"]?.int64Value else { return nil }
        budgetStart = Timestamp(milliseconds: start)
        attempts = json["attempts"]?.arrayValue?.compactMap(DeliveryAttempt.init(json:)) ?? []
        attemptsBefore = Int(json["attemptsBefore"]?.int64Value ?? 0)
        replayOf = json["replayOf"]?.stringValue
        redelivery = json["redelivery"]?.boolValue ?? false
    }

    var encoded: [UInt8] {
        var fields: [(String, JSONValue)] = [
            ("attempts", .array(attempts.map(\.json))),
            ("budgetStart", .integer(budgetStart.milliseconds)),
            ("attemptsBefore", .integer(Int64(attemptsBefore))),
            ("replayOf", .string(replayOf)),
        ]
        if redelivery { fields.append(("redelivery", .bool(true))) }
        return JSONValue.object(JSONObject(fields)).serializedBytes()
    }
}
