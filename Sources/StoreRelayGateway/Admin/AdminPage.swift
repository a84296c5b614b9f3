import StoreRelayDelivery
import StoreRelayStorage
import StoreRelayCore

/// The admin page's HTML, rendered on the server and usable without JavaScript: every action
/// is a plain form. Pure functions of their model; every value passes through
/// `HTMLEscaping.escape` (the `h` helper) on its way in.
enum AdminPage {
    struct Model {
        var ready: Bool
        var destinations: [DestinationStatus]
        var deadLetterCounts: [String?: Int]
        /// Dead-letter records (SPEC shape) of the current page, newest first.
        var letters: [JSONValue]
        var nextCursor: String?
        var filters: DeadLetterFilters
        /// The session's CSRF token; nil when the page was fetched with a bearer token.
        var csrfToken: String?
        var notice: String?
        var now: Timestamp
        /// `/api/status`'s `reconciliation` entries: each app and environment asked of Apple.
        var reconciliations: [JSONValue] = []
        /// `AdminBackend.alerts`: shown first, in red.
        var alerts: [String] = []
        /// `AdminBackend.intake`: the intake panel.
        var intake: [IntakeFigures] = []
        /// `AdminBackend.clusterStatus`: the cluster panel; nil in single-node mode.
        var cluster: JSONValue?
        /// The events the search box found, when it holds text.
        var search: EventSearch?
    }

    /// What the search box's text found among events: the event of that id, or the events
    /// of that subscription (its timeline).
    struct EventSearch {
        var text: String
        var events: [EventDeliveryState]
        /// The original transaction id, when the text named a subscription.
        var subscription: String?
        /// What the event log found (every kept event the text names), when there is a log.
        var logged: EventLogPage?
    }

    /// Sized for a 1,280-pixel window: tables take the width they are given (`fixed` layout
    /// where ids and errors could push them wider), long values are cut with an ellipsis and
    /// shown whole on hover, and an id cut short is still copied whole (`user-select: all`).
    static let style = """
        body{font:14px/1.4 system-ui,sans-serif;margin:1.5rem;color:#222}
        h1{font-size:1.3rem;margin:0}h2{font-size:1.05rem;margin:1.5rem 0 .5rem}h2 small{font-weight:400}
        header{display:flex;gap:1rem;align-items:center;justify-content:space-between}
        table{border-collapse:collapse;width:100%}th,td{border-bottom:1px solid #ddd;padding:.25rem .35rem;text-align:left;vertical-align:top}
        th{background:#f4f4f4;font-weight:600}td.num{text-align:right}code{font-size:12px}
        table.fixed{table-layout:fixed;font-size:13px}table.fixed td{overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
        table.fixed td.wrap{white-space:normal;overflow-wrap:anywhere}
        code.copy{display:inline-block;max-width:6.5em;overflow:hidden;text-overflow:ellipsis;white-space:nowrap;vertical-align:bottom;
        user-select:all;cursor:copy;background:#f4f4f4;border-radius:3px;padding:0 .2em}
        .clamp{display:-webkit-box;-webkit-line-clamp:2;-webkit-box-orient:vertical;overflow:hidden;white-space:normal;overflow-wrap:anywhere}
        .panels{display:flex;gap:1.5rem;flex-wrap:wrap}.panels>section{flex:1 1 30rem;min-width:0}
        .tag{display:inline-block;font-size:11px;padding:0 .35em;border-radius:3px;background:#eee;margin-right:.2em}
        .tag.bad{background:#fbeeee}.tag.ok{background:#eef6ee}.tag.warn{background:#fff4d6;color:#7a5200}
        ol.timeline{list-style:none;padding-left:0;border-left:3px solid #ddd;margin-left:.4rem}
        ol.timeline li{padding:.2rem 0 .4rem .8rem;overflow-wrap:anywhere}
        .ok{color:#17702a}.bad{color:#b00020}.muted{color:#777}.err{max-width:22rem;overflow-wrap:anywhere}
        .notice{background:#eef6ee;border:1px solid #9c9;padding:.4rem .6rem;margin:.8rem 0}
        .alert{background:#fbeeee;border:1px solid #d99;padding:.4rem .6rem;margin:.8rem 0}
        form.inline{display:inline;margin:0}form.filters{display:flex;gap:.6rem;align-items:end;flex-wrap:wrap}
        code.id{user-select:all}pre{background:#f7f7f7;border:1px solid #ddd;padding:.6rem;overflow:auto;max-height:32rem}
        button{cursor:pointer}button.danger{color:#b00020}
        """

    static func render(_ model: Model) -> String {
        var body = "<header><h1>StoreRelay admin</h1><span><a href=\"/events\">Events</a> · "
        body += model.ready ? "<span class=\"ok\">ready</span>" : "<span class=\"bad\">not ready</span>"
        if let csrf = model.csrfToken {
            body += " <form class=\"inline\" method=\"post\" action=\"/logout\">\(hidden("csrf", csrf))<button>Log out</button></form>"
        }
        body += "</span></header>\n"
        for alert in model.alerts { body += "<p class=\"alert bad\">\(h(alert))</p>\n" }
        if let notice = model.notice { body += "<p class=\"notice\">\(h(notice))</p>\n" }
        // What a search found comes first: it is what the operator came for.
        body += eventsSection(model)
        body += "<div class=\"panels\">" + intakePanel(model) + clusterPanel(model) + "</div>\n"
        body += destinationsTable(model)
        body += reconciliationTable(model)
        body += deadLettersSection(model)
        return document(title: "StoreRelay admin", body: body)
    }

    static func login(message: String?) -> String {
        var body = "<h1>StoreRelay admin</h1>\n"
        if let message { body += "<p class=\"bad\">\(h(message))</p>\n" }
        body += """
            <form method="post" action="/login">
            <p><label>Admin token<br><input type="password" name="token" autocomplete="current-password" size="70" autofocus></label></p>
            <p><button>Log in</button></p>
            </form>
            <p class="muted">The token is the configuration's admin-token, or the content of DATA/admin.token.</p>
            """
        return document(title: "Log in — StoreRelay admin", body: body)
    }

    /// A short page for errors met by a browser (stale form, expired session).
    static func message(title: String, text: String) -> String {
        document(title: title, body: "<h1>\(h(title))</h1>\n<p>\(h(text))</p>\n<p><a href=\"/\">Back to the admin page</a></p>")
    }

    static func document(title: String, body: String) -> String {
        """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
        <title>\(h(title))</title><style>\(style)</style></head>
        <body>
        \(body)
        </body></html>

        """
    }

    private static func destinationsTable(_ model: Model) -> String {
        // In cluster mode the queue and dead letters are the server's, shared by every
        // instance; attempts in flight, the breaker and the last success and error are this
        // instance's own: the headings say which.
        let mine = model.cluster == nil ? "" : " <span class=\"tag\">this instance</span>"
        let shared = model.cluster == nil ? "" : " <span class=\"tag\">shared</span>"
        var out = "<h2>Destinations</h2>\n<table id=\"destinations\"><tr><th>Name</th><th>Kind</th><th>State</th><th>Queue depth\(shared)</th>"
            + "<th>In flight\(mine)</th><th>Breaker\(mine)</th><th>Last success\(mine)</th><th>Last error\(mine)</th>"
            + "<th>Dead letters\(shared)</th></tr>\n"
        for status in model.destinations {
            let breakerClass = status.breaker == .closed ? "ok" : "bad"
            var lastError = "<span class=\"muted\">none</span>"
            if let message = status.lastError {
                lastError = h(message) + (status.lastErrorAt.map { " <span class=\"muted\">(\(h(age($0, model.now))) ago)</span>" } ?? "")
            }
            out += "<tr><td>\(h(status.name))</td><td>\(h(status.kind))</td><td>\(pauseCell(status, model))</td>"
                + "<td class=\"num\">\(status.queueDepth)</td>"
                + "<td class=\"num\">\(status.inFlight)</td><td class=\"\(breakerClass)\">\(h(status.breaker.rawValue))</td>"
                + "<td>\(status.lastSuccess.map { h(age($0, model.now)) + " ago" } ?? "<span class=\"muted\">never</span>")</td>"
                + "<td class=\"err\">\(lastError)</td><td class=\"num\">\(model.deadLetterCounts[status.name] ?? 0)</td></tr>\n"
        }
        if model.destinations.isEmpty { out += "<tr><td colspan=\"9\" class=\"muted\">No destinations configured.</td></tr>\n" }
        return out + "</table>\n"
    }

    /// `active` or `paused`, with the button that changes it (a plain form, as every action).
    private static func pauseCell(_ status: DestinationStatus, _ model: Model) -> String {
        let (label, action, button) = status.paused ? ("<span class=\"bad\">paused</span>", "/ui/resume", "Resume")
            : ("<span class=\"ok\">active</span>", "/ui/pause", "Pause")
        return label + " <form class=\"inline\" method=\"post\" action=\"\(action)\">" + hidden("csrf", model.csrfToken ?? "")
            + hidden("destination", status.name) + "<button>\(button)</button></form>"
    }

    /// Each app and environment reconciled with Apple: last pass (when, outcome, what it
    /// recovered) and last probe. Absent when no app has an api-key.
    private static func reconciliationTable(_ model: Model) -> String {
        guard !model.reconciliations.isEmpty else { return "" }
        var out = "<h2>Reconciliation with Apple</h2>\n<table><tr><th>App</th><th>Environment</th><th>Last run</th>"
            + "<th>Outcome</th><th>Found</th><th>Recovered</th><th>Last success</th><th>Last probe</th><th></th></tr>\n"
        func when(_ value: JSONValue?) -> String {
            guard let text = value?.stringValue, let time = Timestamp(iso8601: text) else { return "<span class=\"muted\">never</span>" }
            return h(age(time, model.now)) + " ago"
        }
        for entry in model.reconciliations {
            let run = entry["lastRun"]
            var outcome = "<span class=\"muted\">none yet</span>"
            if let result = run?["outcome"]?.stringValue {
                // A dry run stored nothing: its "recovered" are what a real pass would store.
                let dry = run?["dryRun"]?.boolValue == true ? "<span class=\"tag warn\">dry run</span>" : ""
                outcome = dry + "<span class=\"\(result == "success" ? "ok" : "bad")\">\(h(result))</span>"
                if let error = run?["error"]?.stringValue { outcome += " <span class=\"err\">\(h(error))</span>" }
            }
            var probe = "<span class=\"muted\">none</span>"
            if let result = entry["lastProbe"]?["outcome"]?.stringValue {
                let roundTrip = entry["lastProbe"]?["roundTripMs"]?.int64Value.map { " in \($0) ms" } ?? ""
                probe = "<span class=\"\(result == "arrived" ? "ok" : "bad")\">\(h(result))\(roundTrip)</span> "
                    + when(entry["lastProbe"]?["startedAt"])
            }
            out += "<tr><td>\(h(entry["app"]?.stringValue ?? ""))</td><td>\(h(entry["environment"]?.stringValue ?? ""))</td>"
                + "<td>\(when(run?["startedAt"]))</td><td>\(outcome)</td>"
                + "<td class=\"num\">\(run?["found"]?.int64Value ?? 0)</td><td class=\"num\">\(run?["recovered"]?.int64Value ?? 0)</td>"
                + "<td>\(when(entry["lastSuccess"]))</td><td>\(probe)</td><td>\(appleButtons(entry, model))</td></tr>\n"
        }
        return out + "</table>\n"
    }

    /// Run now, Dry run and Probe for one app and environment (`/ui/reconcile`, `/ui/probe`).
    private static func appleButtons(_ entry: JSONValue, _ model: Model) -> String {
        let fields = hidden("csrf", model.csrfToken ?? "") + hidden("app", entry["app"]?.stringValue ?? "")
            + hidden("environment", entry["environment"]?.stringValue ?? "")
        return "<form class=\"inline\" method=\"post\" action=\"/ui/reconcile\">\(fields)<button>Run now</button></form> "
            + "<form class=\"inline\" method=\"post\" action=\"/ui/reconcile\">\(fields)\(hidden("dryRun", "1"))"
            + "<button>Dry run</button></form> "
            + "<form class=\"inline\" method=\"post\" action=\"/ui/probe\">\(fields)<button>Probe</button></form>"
    }

    static func age(_ time: Timestamp, _ now: Timestamp) -> String {
        AgeFormatting.describe(milliseconds: now.milliseconds - time.milliseconds)
    }

    static func hidden(_ name: String, _ value: String) -> String {
        "<input type=\"hidden\" name=\"\(h(name))\" value=\"\(h(value))\">"
    }

    static func h(_ text: String) -> String { HTMLEscaping.escape(text) }
}
