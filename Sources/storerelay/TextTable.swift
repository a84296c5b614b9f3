/// A table for the terminal, as `dlq list` and `destination list` print it: a header row,
/// columns as wide as their widest cell and two spaces apart, the last column unpadded.
enum TextTable {
    static func render(headers: [String], rows: [[String]]) -> String {
        var widths = headers.map(\.count)
        for row in rows {
            for (column, cell) in row.enumerated() { widths[column] = max(widths[column], cell.count) }
        }
        return ([headers] + rows).map { row in
            row.enumerated().map { column, cell in
                column == row.count - 1 ? cell : cell + String(repeating: " ", count: widths[column] - cell.count + 2)
            }.joined()
        }.joined(separator: "\n")
    }
}
