import StoreRelayCore

/// The `destination list` table: fixed columns, widths fitted to the data, as `dlq list`.
enum DestinationTable {
    static let headers = ["NAME", "KIND", "STATE", "QUEUE", "IN FLIGHT", "BREAKER", "DEAD LETTERS"]

    /// `items` as `/api/destinations` lists them.
    static func render(_ items: [JSONValue]) -> String {
        let rows = items.map { item in
            [item["name"]?.stringValue ?? "-", item["kind"]?.stringValue ?? "-", item["state"]?.stringValue ?? "-",
             String(item["queueDepth"]?.int64Value ?? 0), String(item["inFlight"]?.int64Value ?? 0),
             item["breaker"]?.stringValue ?? "-", String(item["deadLetters"]?.int64Value ?? 0)]
        }
        return TextTable.render(headers: headers, rows: rows)
    }
}
