import StoreRelayVerification
import StoreRelayCore

/// Web page sessions: a random id (the cookie) mapped server-side to its CSRF token and
/// expiry. The admin token itself never leaves the login form; a stolen cookie dies with
/// its session, on logout or at expiry, and a restart ends every session.
final class AdminSessions: Sendable {
    struct Session: Sendable, Equatable {
        var id: String
        /// Sent back in every page form; compared in constant time.
        var csrfToken: String
        var expiresAt: Timestamp
    }

    static let cookieName = "storerelay_session"
    /// The name over TLS: browsers take a `__Host-` cookie only with `Secure`, `Path=/` and
    /// no `Domain`, so no sibling host or plain-HTTP page can set or shadow it.
    static let secureCookieName = "__Host-storerelay_session"

    private let sessions = Locked<[String: Session]>([:])
    private let clock: any TimeSource
    private let lifetime: Duration
    /// Bounds memory if something logs in in a loop; the oldest sessions go first.
    private let maxSessions: Int

    init(clock: any TimeSource, lifetime: Duration, maxSessions: Int = 256) {
        self.clock = clock
        self.lifetime = lifetime
        self.maxSessions = maxSessions
    }

    /// A new session, expiring `lifetime` from now.
    func create() -> Session {
        let now = clock.now()
        let milliseconds = lifetime.components.seconds * 1000 + lifetime.components.attoseconds / 1_000_000_000_000_000
        let session = Session(id: SecureRandom.hexToken(32), csrfToken: SecureRandom.hexToken(32),
                              expiresAt: Timestamp(milliseconds: now.milliseconds + milliseconds))
        sessions.withLock { sessions in
            sessions = sessions.filter { $0.value.expiresAt > now }
            while sessions.count >= maxSessions, let oldest = sessions.values.min(by: { $0.expiresAt < $1.expiresAt }) {
                sessions[oldest.id] = nil
            }
            sessions[session.id] = session
        }
        return session
    }

    /// The live session with cookie value `id`; an expired one is forgotten.
    func session(id: String) -> Session? {
        let now = clock.now()
        return sessions.withLock { sessions in
            guard let session = sessions[id] else { return nil }
            guard session.expiresAt > now else {
                sessions[id] = nil
                return nil
            }
            return session
        }
    }

    func remove(id: String) {
        sessions.withLock { _ = $0.removeValue(forKey: id) }
    }

    /// Seconds until expiry, for the cookie's `Max-Age`.
    var lifetimeSeconds: Int64 { lifetime.components.seconds }
}
