import StoreRelayCrypto
import StoreRelayDelivery
import StoreRelayNet
import StoreRelayStorage
import StoreRelayCore

/// The web page: login and logout, the page itself, and its POST-redirect-GET actions.
///
/// A browser authenticates with a session cookie (`HttpOnly; SameSite=Strict`) obtained by
/// posting the admin token to `/login`; every state-changing form also carries the session's
/// CSRF token. A bearer header works too (scripts, curl), and needs no CSRF token, since no
/// browser attaches it on its own.
extension AdminHandler {
    private enum Caller {
        case session(AdminSessions.Session)
        case bearer
        case anonymous
    }

    func respondToPage(_ route: AdminRoute, _ request: HTTPRequest) async -> HTTPResponse {
        var caller = Caller.anonymous
        if let session = session(of: request) {
            caller = .session(session)
        } else if request.headers["Authorization"] != nil {
            // As for the API: the right token goes through whatever the throttle says.
            if hasBearerToken(request) {
                caller = .bearer
            } else {
                if let refusal = throttled(request) { return refusal }
                recordFailedAuthentication(request, what: "bearer token")
            }
        }
        switch (route, caller) {
        case (.loginForm, .anonymous):
            return html(200, AdminPage.login(message: nil))
        case (.loginForm, _):
            return redirect("/")
        case (.login, _):
            return login(request)
        case (.logout, .session(let session)):
            guard hasCSRFToken(FormEncoding.decode(bodyText(request)), session: session) else { return csrfRejected() }
            sessions.remove(id: session.id)
            return redirect("/login", cookie: sessionCookie(nil, for: request))
        case (.logout, _):
            return redirect("/login")
        case (.page, .anonymous):
            return redirect("/login")
        case (.page, .session(let session)):
            return await page(request, csrfToken: session.csrfToken)
        case (.page, .bearer):
            return await page(request, csrfToken: nil)
        case (.eventLog, .anonymous):
            return redirect("/login")
        case (.eventLog, _):
            return await eventLogPage(request)
        case (.eventPage, .anonymous):
            return redirect("/login")
        case (.eventPage(let id), .session(let session)):
            return await eventPage(id, request, csrfToken: session.csrfToken)
        case (.eventPage(let id), .bearer):
            return await eventPage(id, request, csrfToken: nil)
        case (_, .anonymous):
            return html(401, AdminPage.message(title: "Not logged in", text: "Log in with the admin token first."))
        case (_, .session(let session)):
            let form = FormEncoding.decode(bodyText(request))
            guard hasCSRFToken(form, session: session) else { return csrfRejected() }
            return await act(route, form: form)
        case (_, .bearer):
            return await act(route, form: FormEncoding.decode(bodyText(request)))
        }
    }

    private func login(_ request: HTTPRequest) -> HTTPResponse {
        let sent = FormEncoding.value("token", in: bodyText(request)) ?? ""
        // The right token logs in whatever the throttle says; a wrong one while paused is
        // refused without being counted or logged again.
        guard ConstantTime.equals(sent, token) else {
            if let refusal = throttled(request) {
                var page = html(429, AdminPage.login(message: "Too many wrong tokens from this address; wait a moment and try again."))
                if let retry = refusal.headers["Retry-After"] { page.headers.add(name: "Retry-After", value: retry) }
                return page
            }
            recordFailedAuthentication(request, what: "login form")
            return html(401, AdminPage.login(message: "That token is not the admin token."))
        }
        throttle.recordSuccess(from: clients.client(of: request))
        let session = sessions.create()
        logger.info("admin login", [("http.remote", request.remoteAddress ?? "")])
        return redirect("/", cookie: sessionCookie(session.id, for: request))
    }

    private func page(_ request: HTTPRequest, csrfToken: String?) async -> HTTPResponse {
        let filters: DeadLetterFilters
        do {
            filters = try DeadLetterFilters(query: request.query, defaultLimit: AdminAPI.defaultPageSize, maxLimit: AdminAPI.maxPageSize)
        } catch {
            return html(400, AdminPage.message(title: "Bad filter", text: error.message))
        }
        let listing = await backend.deadLetters.list(filters.query, limit: filters.limit, cursor: filters.cursor)
        let counts = await backend.deadLetters.countsByDestination
        var model = AdminPage.Model(
            ready: backend.isReady, destinations: backend.destinationStatuses,
            deadLetterCounts: counts, letters: listing.items.map(\.json),
            nextCursor: listing.nextCursor, filters: filters, csrfToken: csrfToken,
            notice: Self.notice(FormEncoding.value("done", in: request.query)), now: clock.now(),
            reconciliations: backend.reconciliations, alerts: backend.alerts)
        model.intake = backend.intakeFigures
        model.cluster = await backend.clusterStatus
        if let text = filters.query.text {
            model.search = await searchEvents(text)
        }
        return html(200, AdminPage.render(model))
    }

    /// The events the search box's text names. From the event log when there is one: every
    /// event it keeps whose notificationUUID, originalTransactionId or transactionId is the
    /// text. Otherwise the event of that id, else that subscription's, among the recent ones.
    private func searchEvents(_ text: String) async -> AdminPage.EventSearch {
        let logged = await backend.searchEvents(EventLogQuery(q: text), limit: AdminAPI.defaultPageSize, after: nil)
        if case .success(let page)? = logged {
            return AdminPage.EventSearch(text: text, events: [], subscription: nil, logged: page)
        }
        if AdminRoute.isValidEventID(text), let event = await backend.event(id: text) {
            return AdminPage.EventSearch(text: text, events: [event], subscription: nil)
        }
        let timeline = await backend.events(ofSubscription: text)
        return AdminPage.EventSearch(text: text, events: timeline, subscription: timeline.isEmpty ? nil : text)
    }

    /// `/events`: the events view over `GET /api/events`' filters.
    private func eventLogPage(_ request: HTTPRequest) async -> HTTPResponse {
        var values: [String: String] = [:]
        for pair in FormEncoding.decode(request.query ?? "") where !pair.value.isEmpty && EventFilters.names.contains(pair.name) {
            values[pair.name] = String(pair.value.prefix(200))
        }
        var model = AdminPage.EventLogModel(values: values, page: nil, invalid: nil, now: clock.now())
        do {
            let filters = try EventFilters(query: request.query, defaultLimit: AdminAPI.defaultPageSize, maxLimit: AdminAPI.maxPageSize)
            model.page = await backend.searchEvents(filters.query, limit: filters.limit, after: filters.cursor)
        } catch {
            model.invalid = error.message
            return html(400, AdminPage.eventLog(model))
        }
        return html(200, AdminPage.eventLog(model))
    }

    private func eventPage(_ id: String, _ request: HTTPRequest, csrfToken: String?) async -> HTTPResponse {
        guard AdminRoute.isValidEventID(id) else {
            return html(400, AdminPage.message(title: "Not an event id", text: "An event id is 1 to 64 letters, digits and dashes."))
        }
        guard let state = await backend.event(id: id) else {
            return html(404, AdminPage.message(title: "Event not found",
                                               text: "No event \(id) is known: it is older than the window of recent events and has no dead letters."))
        }
        return html(200, AdminPage.event(AdminPage.EventModel(
            state: state, csrfToken: csrfToken, notice: Self.notice(FormEncoding.value("done", in: request.query)), now: clock.now())))
    }

    /// Runs a page action, then sends the browser back to the page it came from.
    private func act(_ route: AdminRoute, form: [(name: String, value: String)]) async -> HTTPResponse {
        func field(_ name: String) -> String? { form.first { $0.name == name }?.value }
        // The view the form came from: its filters and search, as the page's links carry them.
        let parsed = try? DeadLetterFilters(query: FormEncoding.encode(form.map { ($0.name, $0.value) }),
                                            defaultLimit: AdminAPI.defaultPageSize, maxLimit: AdminAPI.maxPageSize)
        let filters = parsed ?? DeadLetterFilters(limit: AdminAPI.defaultPageSize)
        let cursor = field("cursor").flatMap { DeadLetterFilters.isWellFormedCursor($0) ? $0 : nil }
        let id = field("id") ?? ""
        let notice: String
        switch route {
        case .uiReplay where !DeadLetterStore.isValidID(id), .uiPurge where !DeadLetterStore.isValidID(id):
            notice = "invalid"
        case .uiReplay:
            // The page never forces: a stale notification is replayed from the CLI or API,
            // by an operator who has checked its destination can tell.
            switch await backend.replay(deadLetterId: id, force: false) {
            case .replayed: notice = "replayed-1"
            case .notFound: notice = "missing"
            case .noRoute: notice = "noroute"
            case .alreadyReplaying: notice = "busy"
            case .unreadable: notice = "unreadable"
            case .tampered: notice = "tampered"
            case .notUnderstood: notice = "notunderstood"
            case .stale: notice = "stale"
            }
        case .uiPurge:
            notice = await backend.deadLetters.delete(id: id) ? "purged-1" : "missing"
        case .uiPause, .uiResume:
            notice = await pauseOrResume(route == .uiPause, destination: field("destination") ?? "")
        case .uiReconcile, .uiProbe:
            notice = startAppleCheck(probe: route == .uiProbe, app: field("app") ?? "", environment: field("environment") ?? "",
                                     dryRun: field("dryRun") == "1")
        case .uiRedeliver:
            notice = await redeliver(event: field("event") ?? "", destination: field("destination") ?? "")
        case .uiReplayAll where parsed == nil:
            // Filters that do not parse must never widen a bulk replay to everything.
            notice = "badfilter"
        default:
            // What the page showed (the search narrows the replay too), less what a bulk
            // replay leaves: quarantined letters unless filtered by reason, and stale ones.
            let result = await backend.replayAll(filters.query, force: false)
            notice = "replayed-\(result.replayed)" + (result.stale > 0 ? "-stale-\(result.stale)" : "")
        }
        logger.info("admin page action", [("admin.action", "\(route)"), ("admin.result", notice)])
        // A replay from an event's view goes back to that view.
        if let event = field("event"), AdminRoute.isValidEventID(event) {
            return redirect("/events/\(event)?" + FormEncoding.encode([("done", notice)]))
        }
        return redirect("/?" + AdminPage.filterQuery(filters, cursor: cursor, notice: notice))
    }

    /// The page's Pause or Resume button: the `done=` marker of what happened.
    private func pauseOrResume(_ pause: Bool, destination name: String) async -> String {
        guard AdminAPI.isValidDestinationName(name) else { return "nodestination" }
        switch await backend.setPaused(pause, destination: name) {
        case .done: return pause ? "paused" : "resumed"
        case .unknownDestination: return "nodestination"
        case .failed: return "pausefailed"
        }
    }

    /// The page's Run now, Dry run and Probe buttons: starts the pass or probe and returns
    /// at once (a pass may take minutes); the reconciliation table shows how it ended.
    private func startAppleCheck(probe: Bool, app: String, environment name: String, dryRun: Bool) -> String {
        guard let environment = AppStoreEnvironment(appleName: name), environment == .production || environment == .sandbox,
              backend.reconciliations.contains(where: { $0["app"]?.stringValue == app && $0["environment"]?.stringValue == environment.rawValue })
        else { return "noreconcile" }
        let logger = logger
        let done: @Sendable (JSONValue?) -> Void = { report in
            logger.info("admin page check finished", [("app", app), ("environment", environment.rawValue),
                                                      ("check", probe ? "probe" : dryRun ? "dry run" : "reconcile"),
                                                      ("outcome", report?["outcome"]?.stringValue ?? "not set up")])
        }
        if probe {
            backend.probe(app: app, environment: environment, timeout: .seconds(60), completion: done)
            return "probing"
        }
        backend.reconcile(app: app, environment: environment, since: nil, onlyFailures: false, dryRun: dryRun, completion: done)
        return dryRun ? "dryrunning" : "reconciling"
    }

    /// The event view's Redeliver button: the `done=` marker of what happened.
    private func redeliver(event: String, destination name: String) async -> String {
        guard AdminRoute.isValidEventID(event), AdminAPI.isValidDestinationName(name) else { return "badredeliver" }
        switch await backend.redeliver(eventId: event, destination: name) {
        case .queued: return "redelivered"
        case .unknownEvent: return "noevent"
        case .unknownDestination: return "nodestination"
        case .stillPending: return "stillpending"
        case .deadLettered: return "deadlettered"
        case .bodyNoLongerHeld: return "nobody"
        case .notDeliverable, .failed: return "notredelivered"
        }
    }

    /// The sentence for a `done=` marker; only known markers are shown.
    static func notice(_ marker: String?) -> String? {
        guard let marker else { return nil }
        for (prefix, verb) in [("replayed-", "Replayed"), ("purged-", "Purged")] where marker.hasPrefix(prefix) {
            // `replayed-N`, or `replayed-N-stale-M` when a bulk replay left stale letters.
            let parts = marker.dropFirst(prefix.count).split(separator: "-", omittingEmptySubsequences: false)
            guard let count = Int(parts[0]), count >= 0 else { return nil }
            let sentence = "\(verb) \(count) dead letter\(count == 1 ? "" : "s")."
            guard parts.count > 1 else { return sentence }
            guard verb == "Replayed", parts.count == 3, parts[1] == "stale", let stale = Int(parts[2]), stale > 0 else { return nil }
            return sentence + " Left \(stale) whose notification is stale (signed before the dedupe-window); "
                + "replay \(stale == 1 ? "it" : "them") with storerelay dlq replay --force if the destination can tell."
        }
        switch marker {
        case "missing": return "That dead letter no longer exists."
        case "noroute": return "That dead letter still matches no route; fix routes.conf first."
        case "busy": return "That dead letter is already being replayed."
        case "unreadable": return "That dead letter's event could not be read from the journal; it cannot be replayed."
        case "tampered": return "That dead letter failed its cluster-key check (written or changed on the server by something other "
            + "than an instance, or sealed with a key this instance lacks); it is kept aside, and replayed once it checks out."
        case "notunderstood": return "This StoreRelay still cannot read that notification (see its reason); replay it again after an upgrade that reads it."
        case "stale": return "That dead letter's notification is stale (signed before the dedupe-window): a destination could not tell "
            + "a replay from a first delivery. Replay it with storerelay dlq replay --force if it can."
        case "paused": return "Paused: the destination starts no attempt and keeps its backlog until resumed."
        case "resumed": return "Resumed: the destination delivers its backlog."
        case "nodestination": return "There is no such destination."
        case "redelivered": return "Redelivery queued: the destination receives the event again, marked StoreRelay-Redelivery: 1."
        case "noevent": return "The gateway no longer remembers that event."
        case "stillpending": return "That delivery has not finished yet; nothing was redelivered."
        case "deadlettered": return "That delivery ended as a dead letter: replay the letter instead."
        case "nobody": return "That destination receives Apple's body, which the gateway no longer holds for this event."
        case "notredelivered": return "The event was not redelivered."
        case "badredeliver": return "That is not an event id and a destination name."
        case "pausefailed": return "The change could not be stored; nothing changed. Try again."
        case "invalid": return "That is not a dead-letter id."
        case "badfilter": return "Those filters are not valid; nothing was replayed."
        case "reconciling": return "Reconciliation started: reload to see its outcome in the table."
        case "dryrunning": return "Dry run started (nothing is stored): reload to see what it found in the table."
        case "probing": return "Probe started: Apple sends a TEST notification; reload within a minute to see whether it arrived."
        case "noreconcile": return "That app and environment are not reconciled here (no api-key, or the environment is not accepted)."
        default: return nil
        }
    }

    private func csrfRejected() -> HTTPResponse {
        html(403, AdminPage.message(title: "Form expired", text: "The form's CSRF token is missing or wrong. Reload the page and try again."))
    }

    private func bodyText(_ request: HTTPRequest) -> String { String(decoding: request.body, as: UTF8.self) }

    private func html(_ status: Int, _ body: String) -> HTTPResponse {
        HTTPResponse(status: status, contentType: "text/html; charset=utf-8", body: body, headers: Self.pageHeaders)
    }

    private func redirect(_ location: String, cookie: String? = nil) -> HTTPResponse {
        var headers = Self.pageHeaders
        headers.add(name: "Location", value: location)
        if let cookie { headers.add(name: "Set-Cookie", value: cookie) }
        return HTTPResponse(status: 303, headers: headers)
    }

    /// No script may run, the page may not be framed, forms post only here, nothing is cached.
    static let pageHeaders: HTTPHeaders = [
        "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
        "X-Content-Type-Options": "nosniff",
        "X-Frame-Options": "DENY",
        "Referrer-Policy": "no-referrer",
        "Cache-Control": "no-store",
    ]
}
