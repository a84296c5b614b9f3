import StoreRelayDelivery
import StoreRelayCore

/// The dead-letter half of the page: the filter form, the table with per-row Replay and
/// Purge forms, "replay all matching", and the next-page link.
extension AdminPage {
    static func deadLettersSection(_ model: Model) -> String {
        let total = model.deadLetterCounts.values.reduce(0, +)
        var out = "<h2>Dead letters <span class=\"muted\">(\(total) in all)</span></h2>\n" + filterForm(model)
        out += "<table><tr><th>Event id</th><th>Dead letter</th><th>Age</th><th>Destination</th><th>Reason</th><th>Type</th>"
            + "<th>Env</th><th>Bundle id</th><th>Product id</th><th>Original transaction</th><th>Attempts</th><th>Last error</th>"
            + "<th></th></tr>\n"
        for record in model.letters {
            out += row(DeadLetterSummary(record: record), model)
        }
        if model.letters.isEmpty {
            out += "<tr><td colspan=\"13\" class=\"muted\">No dead letters match.</td></tr>\n"
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
        out += "<label>Search<br><input type=\"search\" name=\"q\" size=\"40\" value=\"\(h(model.filters.query.text ?? ""))\" "
            + "placeholder=\"event id, original transaction id, transaction id, bundle id or type\"></label>"
        out += "<label>Since<br><input name=\"since\" size=\"12\" value=\"\(h(model.filters.sinceText ?? ""))\" placeholder=\"24h or ISO-8601\"></label>"
        out += "<label>Until<br><input name=\"until\" size=\"12\" value=\"\(h(model.filters.untilText ?? ""))\" placeholder=\"1h or ISO-8601\"></label>"
        return out + "<button>Filter</button></form>\n"
    }

    private static func row(_ letter: DeadLetterSummary, _ model: Model) -> String {
        let created = letter.createdAt?.iso8601 ?? ""
        let cells = [
            // The whole id, selectable in one click, and the way to the event's own view.
            "<a href=\"/events/\(h(letter.eventId))\"><code class=\"id\">\(h(letter.eventId))</code></a>",
            "<code>\(h(letter.id))</code>",
            "<span title=\"\(h(created))\">\(h(letter.age(now: model.now)))</span>",
            letter.destination.map(h) ?? "<span class=\"muted\">none</span>",
            h(letter.reason),
            h(letter.typeAndSubtype),
            h(letter.environment ?? ""),
            h(letter.bundleId ?? ""),
            h(letter.productId ?? ""),
            h(letter.originalTransactionId ?? ""),
            "\(letter.attemptCount)",
        ]
        var out = "<tr>" + cells.map { "<td>\($0)</td>" }.joined()
        out += "<td class=\"err\">\(h(letter.lastError ?? ""))</td><td>"
        out += "<form class=\"inline\" method=\"post\" action=\"/ui/replay\">" + hidden("id", letter.id)
            + returnFields(model, cursor: true) + "<button>Replay</button></form> "
        out += "<form class=\"inline\" method=\"post\" action=\"/ui/purge\">" + hidden("id", letter.id)
            + returnFields(model, cursor: true) + "<button class=\"danger\">Purge</button></form>"
        return out + "</td></tr>\n"
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
