import StoreRelayGateway
import StoreRelayCore

/// The `dlq list` table: fixed columns, widths fitted to the data, the last error cut short.
enum DlqTable {
    static let headers = ["ID", "AGE", "DESTINATION", "REASON", "TYPE", "ENV", "BUNDLE", "ATTEMPTS", "LAST ERROR"]
    static let maxErrorWidth = 60

    static func render(_ letters: [DeadLetterSummary], now: Timestamp) -> String {
        let rows = letters.map { letter in
            [letter.id, letter.age(now: now), letter.destination ?? "-", letter.reason, letter.typeAndSubtype,
             letter.environment ?? "-", letter.bundleId ?? "-", String(letter.attemptCount), shorten(letter.lastError ?? "")]
        }
        return TextTable.render(headers: headers, rows: rows)
    }

    /// One line, at most `maxErrorWidth` characters: errors may quote a downstream's body.
    private static func shorten(_ text: String) -> String {
        let line = text.map { $0.isNewline || $0 == "\t" ? " " : $0 }
        return line.count <= maxErrorWidth ? String(line) : String(line.prefix(maxErrorWidth - 1)) + "…"
    }
}
