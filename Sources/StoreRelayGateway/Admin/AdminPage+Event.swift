import StoreRelayDelivery
import StoreRelayCore

/// One event's view: the normalized event, and each destination's delivery with its
/// attempts, where a dead-lettered delivery can be replayed and a delivered one redelivered.
extension AdminPage {
    struct EventModel {
        var state: EventDeliveryState
        var csrfToken: String?
        var notice: String?
        var now: Timestamp
    }

    static func event(_ model: EventModel) -> String {
        let json = model.state.json
        let id = model.state.notification.id
        var body = "<header><h1>Event <code class=\"id\">\(h(id))</code></h1><span><a href=\"/\">All dead letters</a></span></header>\n"
        if let notice = model.notice { body += "<p class=\"notice\">\(h(notice))</p>\n" }
        body += "<p>Received \(h(model.state.notification.receivedAt.iso8601)) · \(h(json["disposition"]?.stringValue ?? ""))"
        if let reason = json["quarantineReason"]?.stringValue { body += " (\(h(reason)))" }
        // The rest of the story: the subscription's other events, through the page's search.
        if let subscription = model.state.notification.event.originalTransactionId {
            body += " · <a href=\"/?\(h(FormEncoding.encode([("q", subscription)])))\">subscription \(h(subscription))'s timeline</a>"
        }
        body += "</p>\n"
        if !model.state.allDeliveriesKnown {
            body += "<p class=\"muted\">This event is older than the window of recent events: only its dead letters are known.</p>\n"
        }
        body += "<h2>Deliveries</h2>\n<table><tr><th>Destination</th><th>State</th><th>Attempts</th><th>Next attempt</th>"
            + "<th>Dead letter</th><th></th></tr>\n"
        for delivery in model.state.deliveries {
            body += deliveryRow(delivery, eventId: id, model)
        }
        if model.state.deliveries.isEmpty {
            body += "<tr><td colspan=\"6\" class=\"muted\">No destination: the event was quarantined or matched no route.</td></tr>\n"
        }
        body += "</table>\n<h2>Normalized event</h2>\n<pre>\(h(PrettyJSON.render(json["event"] ?? .null)))</pre>\n"
        return document(title: "Event \(id) — StoreRelay admin", body: body)
    }

    private static func deliveryRow(_ delivery: EventDeliveryState.Delivery, eventId: String, _ model: EventModel) -> String {
        var attempts = delivery.attempts.map { attempt in
            h(attempt.at.iso8601) + " " + (attempt.status.map { "HTTP \($0)" } ?? "no answer")
                + (attempt.error.map { " — " + h($0) } ?? "")
        }.joined(separator: "<br>")
        if attempts.isEmpty { attempts = "<span class=\"muted\">none</span>" }
        var row = "<tr><td>\(h(delivery.destination))</td><td>\(h(delivery.phase.rawValue))</td><td class=\"err\">\(attempts)</td>"
            + "<td>\(delivery.nextAttempt.map { h($0.iso8601) } ?? "")</td>"
            + "<td>\(delivery.deadLetterId.map { "<code>\(h($0))</code>" } ?? "")</td><td>"
        if let letter = delivery.deadLetterId, delivery.phase == .deadLettered {
            row += "<form class=\"inline\" method=\"post\" action=\"/ui/replay\">" + hidden("csrf", model.csrfToken ?? "")
                + hidden("id", letter) + hidden("event", eventId) + "<button>Replay</button></form>"
        } else if delivery.phase == .delivered {
            row += "<form class=\"inline\" method=\"post\" action=\"/ui/redeliver\">" + hidden("csrf", model.csrfToken ?? "")
                + hidden("event", eventId) + hidden("destination", delivery.destination) + "<button>Redeliver</button></form>"
        }
        return row + "</td></tr>\n"
    }
}
