import StoreRelayDelivery
import StoreRelayCore

/// The events the search box found: the event of an id, or a subscription's timeline by
/// its original transaction id, each with where every delivery stands. Shown above the dead
/// letters, so a pasted id finds a delivered event as well as a dead-lettered one.
extension AdminPage {
    static func eventsSection(_ model: Model) -> String {
        guard let search = model.search else { return "" }
        if let logged = search.logged {
            var out = "<h2>Events matching <code>\(h(search.text))</code> <small class=\"muted\">(from the event log, newest first; "
                + "<a href=\"/events?\(h(FormEncoding.encode([("q", search.text)])))\">open in the events view</a>)</small></h2>\n"
            out += eventLogTable(logged.items, now: model.now)
            if logged.nextCursor != nil { out += "<p class=\"muted\">More in the events view.</p>\n" }
            return out
        }
        if let subscription = search.subscription {
            return "<h2>Subscription <code>\(h(subscription))</code> <small class=\"muted\">(timeline, oldest first: "
                + "\(search.events.count) event\(search.events.count == 1 ? "" : "s") still known)</small></h2>\n"
                + timeline(search.events, model)
        }
        var out = "<h2>Events matching <code>\(h(search.text))</code></h2>\n"
        guard let event = search.events.first else {
            return out + "<p class=\"muted\">No event has this id or original transaction id among the unfinished and recent events.</p>\n"
        }
        out += timeline([event], model)
        return out
    }

    /// One line per event, oldest first: when, what, and each destination's state.
    private static func timeline(_ events: [EventDeliveryState], _ model: Model) -> String {
        var out = "<ol class=\"timeline\">\n"
        for state in events.sorted(by: { $0.notification.receivedAt < $1.notification.receivedAt }) {
            let event = state.notification.event
            let id = state.notification.id
            var line = "<span title=\"\(h(state.notification.receivedAt.iso8601))\">\(h(state.notification.receivedAt.iso8601))</span> "
                + "<b>\(h(event.type))\(event.subtype.map { "/" + h($0) } ?? "")</b> "
                + "<code class=\"copy\" title=\"\(h(id)) (click selects the whole id)\">\(h(id))</code> "
                + "<a href=\"/events/\(h(id))\">view</a> "
                + "<span class=\"muted\">\(h(event.environment?.rawValue ?? "unknown")) · \(h(event.bundleId ?? ""))</span> "
            if case .quarantine(let reason) = state.notification.disposition {
                line += "<span class=\"tag warn\" title=\"\(h(reason))\">quarantined</span>"
            }
            for delivery in state.deliveries {
                let tone = switch delivery.phase {
                case .delivered: "ok"
                case .pending: "warn"
                case .deadLettered: "bad"
                }
                line += "<span class=\"tag \(tone)\">\(h(delivery.destination)): \(h(delivery.phase.rawValue))</span>"
            }
            out += "<li>\(line)</li>\n"
        }
        return out + "</ol>\n"
    }
}
