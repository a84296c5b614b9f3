import StoreRelayDelivery
import StoreRelayCore

/// The dead-letter half of the page: the filter form, the table with per-row Replay and
/// Purge forms, "replay all matching", and the next-page link.
extension AdminPage {
    static func deadLettersSection(_ model: Model) -> String {
        let total = model.deadLetterCounts.values.reduce(0, +)
        var out = "<h2>Dead letters <span class=\"muted\">(\(total) in all)</span></h2>\n" + filterForm(model)
        // Fixed widths (percent of the window) keep the table within it; what does not fit a
        // cell is cut with an ellipsis and shown whole on hover.
        out += "<table class=\"fixed\"><colgroup><col style=\"width:21%\"><col style=\"width:4%\"><col style=\"width:10%\">"
            + "<col style=\"width:8%\"><col style=\"width:16%\"><col style=\"width:14%\"><col style=\"width:13%\">"
            + "<col style=\"width:2%\"><col style=\"width:12%\"></colgroup>"
            + "<tr><th>Event</th><th>Age</th><th>Destination</th><th>Reason</th><th>Type, environment</th>"
            + "<th>Bundle id, product id</th><th title=\"Original transaction id\">Orig. transaction</th>"
            + "<th title=\"Attempts\">#</th><th>Last error</th></tr>\n"
        for record in model.letters {
            out += row(DeadLetterSummary(record: record), model)
        }
        if model.letters.isEmpty {
            out += "<tr><td colspan=\"9\" class=\"muted\">No dead letters match.</td></tr>\n"
        }
        out += "</table>\n<p>"
        if let next = model.nextCursor {
            out += "<a href=\"/?\(h(filterQuery(model.filters, cursor: next)))\">Next page</a> "
        }
        if model.filters.cursor != nil {
            out += "<a href=\"/?\(h(filterQuery(model.filters, cursor: nil)))\">First page</a> "
        }
        if !model.letters.isEmpty {
            out += "<form class=\"inline\" method=\"post\" action=\"/ui/replay-all\">" + returnFields(model, cursor: false)
                + "<button>Replay all matching</button></form>"
            // A bulk replay takes quarantined letters only when asked for by reason: say so
            // where the button is, since the table above may show some.
            if model.filters.reason == nil {
                out += " <span class=\"muted\">(quarantined letters only with the reason filter quarantined or not-understood; "
                    + "stale ones are left)</span>"
            } else {
                out += " <span class=\"muted\">(stale ones are left)</span>"
            }
        }
        return out + "</p>\n"
    }

    private static func filterForm(_ model: Model) -> String {
        var names = Set(model.destinations.map(\.name))
        for case let name? in model.deadLetterCounts.keys { names.insert(name) }
        if let chosen = model.filters.destination { names.insert(chosen) }
        var out = "<form class=\"filters\" method=\"get\" action=\"/\"><label>Destination<br><select name=\"destination\">"
            + option("", "any", selected: model.filters.destination == nil)
        for name in names.sorted() { out += option(name, name, selected: model.filters.destination == name) }
        out += "</select></label><label>Reason<br><select name=\"reason\">" + option("", "any", selected: model.filters.reason == nil)
        for reason in DeadLetterReasonFilter.all {
            out += option(reason.name, reason.name, selected: model.filters.reason == reason)
        }
        out += "</select></label>"
        out += "<label>Search events and dead letters<br><input type=\"search\" name=\"q\" size=\"40\" value=\"\(h(model.filters.query.text ?? ""))\" "
            + "placeholder=\"any id: event, original transaction, transaction; or bundle id, type\"></label>"
        out += "<label>Since<br><input name=\"since\" size=\"12\" value=\"\(h(model.filters.sinceText ?? ""))\" placeholder=\"24h or ISO-8601\"></label>"
        out += "<label>Until<br><input name=\"until\" size=\"12\" value=\"\(h(model.filters.untilText ?? ""))\" placeholder=\"1h or ISO-8601\"></label>"
        return out + "<button>Filter</button></form>\n"
    }

    /// One compact row: the event id cut short (one click selects all of it to copy), the
    /// way to the event's view and the row's actions beside it, then the App Store context.
    private static func row(_ letter: DeadLetterSummary, _ model: Model) -> String {
        let created = letter.createdAt?.iso8601 ?? ""
        var event = "<code class=\"copy\" title=\"\(h(letter.eventId)) (click selects the whole id)\">\(h(letter.eventId))</code> "
            + "<a href=\"/events/\(h(letter.eventId))\" title=\"The event's view\">view</a> "
        event += "<form class=\"inline\" method=\"post\" action=\"/ui/replay\">" + hidden("id", letter.id)
            + returnFields(model, cursor: true) + "<button title=\"Replay dead letter \(h(letter.id))\">Replay</button></form> "
        event += "<form class=\"inline\" method=\"post\" action=\"/ui/purge\">" + hidden("id", letter.id)
            + returnFields(model, cursor: true) + "<button class=\"danger\" title=\"Purge dead letter \(h(letter.id))\">Purge</button></form>"
        let cells = [
            "<span title=\"\(h(created))\">\(h(letter.age(now: model.now)))</span>",
            letter.destination.map(titled) ?? "<span class=\"muted\">none</span>",
            titled(letter.reason),
            // Wraps after the slash rather than losing the subtype; the environment below it.
            "<span title=\"\(h(letter.typeAndSubtype))\">"
                + h(letter.typeAndSubtype).split(separator: "/", omittingEmptySubsequences: false).joined(separator: "/<wbr>")
                + "</span><br><span class=\"muted\">\(h(letter.environment ?? ""))</span>",
            titled(letter.bundleId ?? "") + "<br>" + titled(letter.productId ?? ""),
            titled(letter.originalTransactionId ?? ""),
            "\(letter.attemptCount)",
        ]
        // Only the type wraps (at its slash); the other cells keep to their lines.
        var out = "<tr><td>\(event)</td>" + cells.enumerated().map { index, cell in
            index == 3 ? "<td class=\"wrap\">\(cell)</td>" : "<td>\(cell)</td>"
        }.joined()
        let error = letter.lastError ?? ""
        out += "<td class=\"wrap\"><span class=\"clamp err\" title=\"\(h(error))\">\(h(error))</span></td>"
        return out + "</tr>\n"
    }

    /// `text`, whole on hover when its cell cuts it short.
    private static func titled(_ text: String) -> String {
        "<span title=\"\(h(text))\">\(h(text))</span>"
    }

    /// The CSRF token and the current filters, so the redirect after the action comes back
    /// to the same view.
    private static func returnFields(_ model: Model, cursor: Bool) -> String {
        var out = hidden("csrf", model.csrfToken ?? "")
        if let destination = model.filters.destination { out += hidden("destination", destination) }
        if let reason = model.filters.reason { out += hidden("reason", reason.name) }
        for (name, value) in model.filters.searchPairs(resolvedTimes: true) { out += hidden(name, value) }
        if cursor, let value = model.filters.cursor { out += hidden("cursor", value) }
        return out
    }

    /// `destination=..&reason=..&cursor=..` for links back to the page (empty parts left out).
    static func filterQuery(_ filters: DeadLetterFilters, cursor: String?, notice: String? = nil) -> String {
        var pairs: [(String, String)] = []
        if let destination = filters.destination { pairs.append(("destination", destination)) }
        if let reason = filters.reason { pairs.append(("reason", reason.name)) }
        pairs += filters.searchPairs()
        if let cursor { pairs.append(("cursor", cursor)) }
        if let notice { pairs.append(("done", notice)) }
        return FormEncoding.encode(pairs)
    }

    private static func option(_ value: String, _ label: String, selected: Bool) -> String {
        "<option value=\"\(h(value))\"\(selected ? " selected" : "")>\(h(label))</option>"
    }
}
