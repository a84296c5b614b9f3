import StoreRelayNet
import StoreRelayCore

/// Routes, authenticates and answers admin requests; `AdminServer` runs each as a task on
/// its own serial queue (`AdminExecutor`). Holds no mutable state of its own (sessions live
/// in `AdminSessions`).
struct AdminHandler: Sendable {
    let backend: any AdminBackend
    let token: String
    let metrics: @Sendable () async -> String
    let metricsContentType: String
    let sessions: AdminSessions
    let throttle: LoginThrottle
    /// Whose failures a request counts as: the peer, or the client a trusted proxy names.
    let clients: AdminClientAddress
    let clock: any TimeSource
    let logger: Logger

    var api: AdminAPI { AdminAPI(backend: backend) }

    /// Order: route shape (404/405), then authentication (401), then the handler, which
    /// validates identifiers before anything uses them.
    func respond(to request: HTTPRequest) async -> HTTPResponse {
        let route: AdminRoute
        switch AdminRoute.match(method: request.method, path: request.path) {
        case .notFound: return .error(.notFound)
        case .methodNotAllowed(let allow): return .error(.methodNotAllowed, headers: ["Allow": allow.joined(separator: ", ")])
        case .route(let matched): route = matched
        }
        if route == .metrics {
            return await HTTPResponse(status: 200, contentType: metricsContentType, body: metrics())
        }
        if route.isPage {
            // Only the page can be reached by a browser tricked into it (it authenticates with
            // a cookie); scripts send their bearer token to any name they like.
            guard AdminHostCheck.isAllowed(host: request.headers["Host"]) else {
                logger.warning("admin page request refused: Host is not an address", [
                    ("http.remote", request.remoteAddress ?? ""), ("http.host", String((request.headers["Host"] ?? "").prefix(100))),
                ])
                return .error(.misdirected)
            }
            return await respondToPage(route, request)
        }
        if let refusal = apiRefusal(request) { return refusal }
        let response = await respondToAPI(route, request)
        if request.method != "GET" && request.method != "HEAD" { logAction(request, response) }
        return response
    }

    /// Answers `request` through `completion`: once the backend has answered, or once Apple
    /// has for the routes that wait on it (`AdminRoute.isLongRunning`). The others run as a
    /// task on `executor`.
    func respond(to request: HTTPRequest, on executor: AdminExecutor, completion: @escaping @Sendable (HTTPResponse) -> Void) {
        guard case .route(let route) = AdminRoute.match(method: request.method, path: request.path), route.isLongRunning else {
            Task(executorPreference: executor) { completion(await respond(to: request)) }
            return
        }
        if let refusal = apiRefusal(request) { return completion(refusal) }
        let answer: @Sendable (HTTPResponse) -> Void = { [self] response in
            logAction(request, response)
            completion(response)
        }
        if route == .reconcile {
            api.reconcile(body: request.body, completion: answer)
        } else {
            api.probe(body: request.body, completion: answer)
        }
    }

    /// Nil with the right bearer token, whatever the throttle says; else 429 while the client
    /// is paused, 401 otherwise.
    private func apiRefusal(_ request: HTTPRequest) -> HTTPResponse? {
        // The right token is never throttled: a pause that held it back would let anyone who
        // shares the client's address (a proxy's, a NAT's) lock the operator out with one
        // wrong token per pause.
        if hasBearerToken(request) { return nil }
        if let refusal = throttled(request) { return refusal }
        if request.headers["Authorization"] != nil { recordFailedAuthentication(request, what: "bearer token") }
        return .error(.unauthorized, headers: ["WWW-Authenticate": "Bearer realm=\"storerelay\""])
    }

    private func logAction(_ request: HTTPRequest, _ response: HTTPResponse) {
        logger.info("admin action", [("http.method", request.method), ("http.path", request.path),
                                     ("http.status", String(response.status))])
    }

    private func respondToAPI(_ route: AdminRoute, _ request: HTTPRequest) async -> HTTPResponse {
        switch route {
        case .status: await api.status()
        case .event(let id): await api.event(id: id)
        case .listEvents: await api.listEvents(query: request.query)
        case .listDeadLetters: await api.listDeadLetters(query: request.query)
        case .deadLetter(let id): await api.deadLetter(id: id)
        case .deleteDeadLetter(let id): await api.delete(id: id)
        case .replayDeadLetter(let id): await api.replay(id: id, query: request.query, body: request.body)
        case .replayMatching: await api.replayMatching(query: request.query, body: request.body)
        case .redeliverEvent(let id): await api.redeliver(eventId: id, body: request.body)
        case .listDestinations: await api.destinations()
        case .pauseDestination(let name): await api.setPaused(true, destination: name)
        case .resumeDestination(let name): await api.setPaused(false, destination: name)
        default: .error(.notFound)
        }
    }
}
