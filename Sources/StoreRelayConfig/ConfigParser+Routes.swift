import StoreRelayCore

/// `route ENVIRONMENT APP TYPE -> DESTINATION[, DESTINATION...]`.
///
/// Columns are separated by spaces; a comma list may also have spaces after its commas
/// (`REFUND, REVOKE`), so words are first joined into columns across commas.
extension ConfigParser {
    static let routeSyntax = "route ENVIRONMENT APP TYPE -> DESTINATION[, DESTINATION...]"

    mutating func routeDirective(_ head: ConfigToken, _ arguments: [ConfigToken]) {
        guard let arrow = arguments.firstIndex(where: { $0.isSyntax("->") }) else {
            let at = arguments.first { $0.text.contains("->") }
            report(.missingArrow, line: head.line, column: at?.column ?? (arguments.last ?? head).endColumn,
                   at == nil ? "missing '->' in route (expected \(Self.routeSyntax))"
                             : "missing '->' in route (expected '->' as a word of its own, with spaces around it: \(Self.routeSyntax))")
            return
        }
        let columns = Self.columns(Array(arguments[..<arrow]))
        let targets = Self.columns(Array(arguments[(arrow + 1)...]))
        guard columns.count == 3 else {
            let column = columns.count > 3 ? columns[3][0].column : arguments[arrow].column
            report(columns.count > 3 ? .unexpectedArgument : .missingArgument, line: head.line, column: column,
                   "route has \(columns.count) column\(columns.count == 1 ? "" : "s") before '->' (expected ENVIRONMENT APP TYPE: \(Self.routeSyntax))")
            return
        }
        guard targets.count == 1 else {
            if targets.isEmpty {
                report(.missingArgument, line: head.line, column: arguments[arrow].endColumn, "missing destinations after '->' (expected \(Self.routeSyntax))")
            } else {
                report(.unexpectedArgument, line: head.line, column: targets[1][0].column, "unexpected '\(targets[1][0].text)' (expected destinations separated by commas: \(Self.routeSyntax))")
            }
            return
        }
        let environments = selector(columns[0], "environment", ConfigValue.environment)
        let apps = selector(columns[1], "app", Self.routeApp)
        let types = selector(columns[2], "type", Self.typePattern)
        var names: [String] = []
        var items: [Item] = []
        for item in targets[0] where !names.contains(item.text) {
            names.append(item.text)
            items.append(item)
        }
        guard case .valid(let environments) = environments, case .valid(let apps) = apps, case .valid(let types) = types else { return }
        routes.append(RouteRule(environments: environments, bundleIds: apps, types: types, destinations: names, line: head.line))
        routeDestinationItems.append(items)
    }

    /// A parsed route column: valid with nil for `*`, or invalid (already reported).
    private enum Column<T> {
        case valid([T]?)
        case invalid
    }

    /// A column: `*`, or every item parsed.
    private mutating func selector<T>(_ items: [Item], _ what: String, _ parse: (String) throws(ConfigValueError) -> T) -> Column<T> {
        if items.count == 1, items[0].text == "*" { return .valid(nil) }
        var values: [T] = []
        var ok = true
        for item in items {
            do throws(ConfigValueError) {
                if item.text == "*" { throw ConfigValueError("'*' cannot be combined with other values (expected '*' alone or a comma list)") }
                values.append(try parse(item.text))
            } catch {
                report(.invalidValue, line: item.line, column: item.column, "invalid route \(what): \(error.message)")
                ok = false
            }
        }
        return ok ? .valid(values) : .invalid
    }

    /// `TYPE`, `TYPE/*`, `TYPE/SUBTYPE` or `TYPE/-` (no subtype), names in Apple's uppercase
    /// spelling.
    static func typePattern(_ text: String) throws(ConfigValueError) -> RouteRule.TypePattern {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count <= 2, parts.allSatisfy(isTypeName)
                || (parts.count == 2 && isTypeName(parts[0]) && (parts[1] == "*" || parts[1] == "-"))
        else {
            throw ConfigValueError("'\(text)' is not a type (expected TYPE, TYPE/SUBTYPE, TYPE/* or TYPE/- for no subtype, "
                + "in uppercase, e.g. DID_RENEW/BILLING_RECOVERY)")
        }
        return RouteRule.TypePattern(type: String(parts[0]), subtype: parts.count == 2 && parts[1] != "*" ? String(parts[1]) : nil)
    }

    private static func isTypeName(_ text: Substring) -> Bool {
        guard let first = text.unicodeScalars.first, ("A"..."Z").contains(first) else { return false }
        return text.unicodeScalars.allSatisfy { ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "_" }
    }

    /// Joins words into columns: a word ending in `,` continues into the next, a word starting
    /// with `,` continues the previous. Each column is split into its comma items.
    static func columns(_ tokens: [ConfigToken]) -> [[Item]] {
        var columns: [[Item]] = []
        var continues = false
        for token in tokens {
            if columns.isEmpty || !(continues || token.text.hasPrefix(",")) { columns.append([]) }
            var offset = 0
            for piece in token.text.split(separator: ",", omittingEmptySubsequences: false) {
                if !piece.isEmpty {
                    columns[columns.count - 1].append(Item(text: String(piece), line: token.line, column: token.column + (token.isPlain ? offset : 0)))
                }
                offset += piece.unicodeScalars.count + 1
            }
            continues = token.text.hasSuffix(",")
        }
        return columns.filter { !$0.isEmpty }
    }
}
