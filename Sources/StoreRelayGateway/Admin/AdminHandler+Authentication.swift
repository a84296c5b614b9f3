import StoreRelayCrypto
import StoreRelayNet
import StoreRelayCore

/// Who is asking: the bearer token (API and page) or a page session cookie.
extension AdminHandler {
    /// `Authorization: Bearer <token>` with the right token, compared in constant time.
    func hasBearerToken(_ request: HTTPRequest) -> Bool {
        guard let header = request.headers["Authorization"] else { return false }
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return false }
        return ConstantTime.equals(String(parts[1]).trimmingSpaces, token)
    }

    /// The live session named by the request's cookie (either name), if any.
    func session(of request: HTTPRequest) -> AdminSessions.Session? {
        for header in request.headers.values(for: "Cookie") {
            for pair in header.split(separator: ";") {
                let trimmed = String(pair).trimmingSpaces
                for name in [AdminSessions.secureCookieName, AdminSessions.cookieName] where trimmed.hasPrefix(name + "=") {
                    if let session = sessions.session(id: String(trimmed.dropFirst(name.count + 1))) { return session }
                }
            }
        }
        return nil
    }

    /// Whether the browser reached the page over TLS: a TLS-terminating proxy in front says
    /// so with `X-Forwarded-Proto: https` (the admin listener itself speaks plain HTTP). The
    /// session cookie is then `Secure` and named with the `__Host-` prefix, which browsers
    /// accept only from a secure origin, for the whole host and path `/`.
    func isOverTLS(_ request: HTTPRequest) -> Bool {
        request.headers["X-Forwarded-Proto"]?.trimmingSpaces.lowercased() == "https"
    }

    /// The `Set-Cookie` value that sets (or, with nil, clears) the session cookie.
    func sessionCookie(_ id: String?, for request: HTTPRequest) -> String {
        let secure = isOverTLS(request)
        let name = secure ? AdminSessions.secureCookieName : AdminSessions.cookieName
        let lifetime = id == nil ? "0" : String(sessions.lifetimeSeconds)
        return "\(name)=\(id ?? ""); HttpOnly; SameSite=Strict; Path=/; Max-Age=\(lifetime)" + (secure ? "; Secure" : "")
    }

    /// A 429 while the caller must wait (`LoginThrottle`); nil when it may try. Asked only
    /// of a request without the right token: that one is never throttled.
    func throttled(_ request: HTTPRequest) -> HTTPResponse? {
        guard let pause = throttle.pause(for: clients.client(of: request)) else { return nil }
        let seconds = max(1, (pause.wholeMilliseconds + 999) / 1000)
        return .error(.tooManyAttempts, headers: ["Retry-After": String(seconds)])
    }

    /// Counts a wrong token against the caller (`AdminClientAddress`), and says so in the log.
    func recordFailedAuthentication(_ request: HTTPRequest, what: String) {
        let client = clients.client(of: request)
        let pause = throttle.recordFailure(from: client)
        var fields: Logger.Metadata = [("http.remote", request.remoteAddress ?? ""), ("admin.client", client),
                                          ("admin.credential", what)]
        if let pause { fields.append(("admin.pause_seconds", String(max(1, pause.wholeMilliseconds / 1000)))) }
        logger.warning("admin authentication failed", fields)
    }

    /// Whether a page form carries its session's CSRF token.
    func hasCSRFToken(_ form: [(name: String, value: String)], session: AdminSessions.Session) -> Bool {
        guard let sent = form.first(where: { $0.name == "csrf" })?.value else { return false }
        return ConstantTime.equals(sent, session.csrfToken)
    }
}

extension String {
    var trimmingSpaces: String {
        var text = Substring(self)
        while text.first == " " || text.first == "\t" { text = text.dropFirst() }
        while text.last == " " || text.last == "\t" { text = text.dropLast() }
        return String(text)
    }
}
