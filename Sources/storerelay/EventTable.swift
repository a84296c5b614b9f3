import StoreRelayCore

/// The `events list` table: one row per event, its deliveries as `name:state` pairs.
enum EventTable {
    static let headers = ["ID", "RECEIVED", "TYPE", "ENV", "BUNDLE", "ORIGINAL TX", "TX", "DELIVERIES"]

    /// `items` as `GET /api/events` lists them.
    static func render(_ items: [JSONValue]) -> String {
        let rows = items.map { item in
            let type = (item["type"]?.stringValue ?? "-") + (item["subtype"]?.stringValue.map { "/" + $0 } ?? "")
            let deliveries = (item["deliveries"]?.arrayValue ?? []).map { delivery in
                (delivery["destination"]?.stringValue ?? "?") + ":" + (delivery["state"]?.stringValue ?? "?")
            }
            return [item["id"]?.stringValue ?? "-", item["receivedAt"]?.stringValue ?? "-", type, item["environment"]?.stringValue ?? "-",
                    item["bundleId"]?.stringValue ?? "-", item["originalTransactionId"]?.stringValue ?? "-",
                    item["transactionId"]?.stringValue ?? "-", deliveries.isEmpty ? "-" : deliveries.joined(separator: " ")]
        }
        return TextTable.render(headers: headers, rows: rows)
    }
}
