import StoreRelayVerification
import StoreRelayNet

/// Who is asking: the bearer token (API and page) or a page session cookie.
extension AdminHandler {
    /// `Authorization: Bearer <token>` with the right token, compared in constant time.
    func hasBearerToken(_ request: HTTPRequest) -> Bool {
        guard let header = request.headers["Authorization"] else { return false }
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return false }
        return ConstantTime.equals(String(parts[1]).trimmingSpaces, token)
    }

    /// The live session named by the request's cookie, if any.
    func session(of request: HTTPRequest) -> AdminSessions.Session? {
        for header in request.headers.values(for: "Cookie") {
            for pair in header.split(separator: ";") {
                let trimmed = String(pair).trimmingSpaces
                guard trimmed.hasPrefix(AdminSessions.cookieName + "=") else { continue }
                let value = String(trimmed.dropFirst(AdminSessions.cookieName.count + 1))
                if let session = sessions.session(id: value) { return session }
            }
        }
        return nil
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
