import StoreRelayStorage
import StoreRelayCore

/// The events view (`/events`): the event log searched and filtered as `GET /api/events`
/// is, newest first, a page at a time. One search box takes any id; an original transaction
/// id lists that subscription's events — its timeline. Each row links to the event's own
/// view, where deliveries can be replayed or redelivered.
extension AdminPage {
    struct EventLogModel {
        /// The filters as the browser sent them (non-empty values), to fill the form and links.
        var values: [String: String]
        /// Nil when the gateway keeps no event log; otherwise the page, or why it failed.
        var page: Result<EventLogPage, StorageError>?
        /// Why the filters were refused, if they were.
        var invalid: String?
        var now: Timestamp
    }

    static func eventLog(_ model: EventLogModel) -> String {
        var body = "<header><h1>Events</h1><span><a href=\"/\">Dead letters and status</a></span></header>\n"
        body += eventFilterForm(model.values)
        if let invalid = model.invalid {
            return document(title: "Events — StoreRelay admin", body: body + "<p class=\"alert bad\">\(h(invalid))</p>\n")
        }
        switch model.page {
        case nil:
            body += "<p class=\"muted\">This gateway keeps no event log.</p>\n"
        case .failure(let error)?:
            body += "<p class=\"alert bad\">The event log could not be read: \(h(error.message))</p>\n"
        case .success(let page)?:
            if let q = model.values["q"], !page.items.isEmpty, page.items.allSatisfy({ $0.originalTransactionId == q }) {
                body += "<h2>Subscription <code>\(h(q))</code> <small class=\"muted\">(its timeline, newest first)</small></h2>\n"
            }
            body += eventLogTable(page.items, now: model.now)
            if let next = page.nextCursor {
                var values = model.values
                values["cursor"] = next.description
                body += "<p><a href=\"/events?\(h(query(values)))\">Next page</a></p>\n"
            }
        }
        return document(title: "Events — StoreRelay admin", body: body)
    }

    /// The search box and filters, as a GET form: the URL says what is shown, so it can be
    /// bookmarked and shared.
    private static func eventFilterForm(_ values: [String: String]) -> String {
        func field(_ name: String, _ label: String, size: Int, placeholder: String = "") -> String {
            "<label>\(label)<br><input name=\"\(name)\" size=\"\(size)\" value=\"\(h(values[name] ?? ""))\" placeholder=\"\(h(placeholder))\"></label>"
        }
        var environment = "<label>Environment<br><select name=\"environment\"><option value=\"\">any</option>"
        for name in EventFilters.environments {
            environment += "<option\(values["environment"] == name ? " selected" : "")>\(name)</option>"
        }
        environment += "</select></label>"
        return "<form class=\"filters\" method=\"get\" action=\"/events\">"
            + field("q", "Any id", size: 38, placeholder: "notificationUUID, originalTransactionId or transactionId")
            + field("app", "App", size: 18) + environment + field("type", "Type", size: 16)
            + field("state", "Delivery state", size: 16, placeholder: "dead-lettered or billing:pending")
            + field("since", "Since", size: 8, placeholder: "24h") + field("until", "Until", size: 8)
            + "<button>Search</button></form>\n"
    }

    /// One row per event: when, its id (cut short, copied whole, linked to its view), what,
    /// where, the subscription (linked to its timeline) and each destination's state.
    static func eventLogTable(_ items: [EventSummary], now: Timestamp) -> String {
        // Fixed widths for what has a known shape; the deliveries take what is left.
        var out = "<table class=\"fixed\" id=\"events\"><colgroup><col style=\"width:7rem\"><col style=\"width:8.5rem\">"
            + "<col style=\"width:12rem\"><col style=\"width:5.5rem\"><col style=\"width:10rem\"><col style=\"width:9.5rem\"><col></colgroup>\n"
            + "<tr><th>Received</th><th>Event</th><th>Type</th><th>Env</th><th>App</th><th>Subscription</th><th>Deliveries</th></tr>\n"
        for item in items {
            let type = item.type + (item.subtype.map { "/" + $0 } ?? "")
            var subscription = "<span class=\"muted\">none</span>"
            if let original = item.originalTransactionId {
                subscription = "<a href=\"/events?\(h(query(["q": original])))\" title=\"\(h(original)): its timeline\">\(h(original))</a>"
            }
            var deliveries = item.deliveries.map { delivery -> String in
                let tone = switch delivery.state {
                case .delivered: "ok"
                case .pending: "warn"
                case .deadLettered: "bad"
                }
                return "<span class=\"tag \(tone)\">\(h(delivery.destination)): \(h(delivery.state.name))</span>"
            }.joined()
            if deliveries.isEmpty { deliveries = "<span class=\"muted\">none (quarantined or unrouted)</span>" }
            out += "<tr><td title=\"\(h(item.receivedAt.iso8601))\">\(h(age(item.receivedAt, now))) ago</td>"
                + "<td><code class=\"copy\" title=\"\(h(item.id)) (click selects the whole id)\">\(h(item.id))</code> "
                + "<a href=\"/events/\(h(item.id))\">view</a></td>"
                + "<td title=\"\(h(type))\">\(h(type))</td><td>\(h(item.environment ?? "unknown"))</td>"
                + "<td title=\"\(h(item.bundleId ?? ""))\">\(h(item.bundleId ?? ""))</td><td>\(subscription)</td>"
                + "<td class=\"wrap\">\(deliveries)</td></tr>\n"
        }
        if items.isEmpty { out += "<tr><td colspan=\"7\" class=\"muted\">No event matches.</td></tr>\n" }
        return out + "</table>\n"
    }

    /// `values` as a query string, in a stable order.
    private static func query(_ values: [String: String]) -> String {
        FormEncoding.encode(values.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
    }
}
