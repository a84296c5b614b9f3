import StoreRelayCrypto
import StoreRelayCore

/// Web page sessions: a random id (the cookie) mapped server-side to its CSRF token and
/// expiry. The admin token itself never leaves the login form; a stolen cookie dies with
/// its session, on logout or at expiry.
///
/// With a `file`, sessions survive a restart: they are written there (0600, through a
/// temporary file and a rename) at each login and logout, and read back at start with the
/// expired ones dropped. The file holds an HMAC of each session id keyed with the admin
/// token, never the id itself: reading it lets no one in, and a new admin token (rotated
/// after a leak) ends every session, as a restart used to.
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

    /// What is kept per session: the id's digest (the key), its CSRF token and expiry.
    private struct Stored: Sendable {
        var csrfToken: String
        var expiresAt: Timestamp
    }

    /// Sessions by `key(id)`.
    private let sessions: Locked<[String: Stored]>
    /// The admin token: the key of `key(id)`.
    private let secret: [UInt8]
    private let clock: any TimeSource
    private let lifetime: Duration
    /// Bounds memory if something logs in in a loop; the oldest sessions go first.
    private let maxSessions: Int
    private let file: String?
    private let logger: Logger

    init(clock: any TimeSource, lifetime: Duration, secret: String, maxSessions: Int = 256, file: String? = nil,
         logger: Logger = .disabled) {
        self.secret = Array(secret.utf8)
        self.clock = clock
        self.lifetime = lifetime
        self.maxSessions = maxSessions
        self.file = file
        self.logger = logger
        sessions = Locked(file.map { Self.load($0, now: clock.now(), logger: logger) } ?? [:])
    }

    /// A new session, expiring `lifetime` from now.
    func create() -> Session {
        let now = clock.now()
        let session = Session(id: SecureRandom.hexToken(32), csrfToken: SecureRandom.hexToken(32),
                              expiresAt: now.advanced(by: lifetime))
        let snapshot = sessions.withLock { sessions in
            sessions = sessions.filter { $0.value.expiresAt > now }
            while sessions.count >= maxSessions, let oldest = sessions.min(by: { $0.value.expiresAt < $1.value.expiresAt }) {
                sessions[oldest.key] = nil
            }
            sessions[key(session.id)] = Stored(csrfToken: session.csrfToken, expiresAt: session.expiresAt)
            return sessions
        }
        save(snapshot)
        return session
    }

    /// The live session with cookie value `id`; an expired one is forgotten.
    func session(id: String) -> Session? {
        let now = clock.now()
        let key = key(id)
        return sessions.withLock { sessions in
            guard let stored = sessions[key] else { return nil }
            guard stored.expiresAt > now else {
                sessions[key] = nil
                return nil
            }
            return Session(id: id, csrfToken: stored.csrfToken, expiresAt: stored.expiresAt)
        }
    }

    func remove(id: String) {
        let snapshot = sessions.withLock { sessions in
            sessions[key(id)] = nil
            return sessions
        }
        save(snapshot)
    }

    /// Seconds until expiry, for the cookie's `Max-Age`.
    var lifetimeSeconds: Int64 { lifetime.components.seconds }

    private func key(_ id: String) -> String {
        SHA256.hex(HMACSHA256.authenticationCode(for: Array(id.utf8), key: secret))
    }

    // MARK: The file

    /// `{"sessions":[{"idHMAC":..,"csrf":..,"expiresAtMs":..}]}`. When the file cannot be
    /// written, the sessions in memory still work, and the failure is logged: at the next
    /// restart the file's older content applies (a logout not saved is undone then).
    private func save(_ snapshot: [String: Stored]) {
        guard let file else { return }
        let entries: [JSONValue] = snapshot.sorted { $0.key < $1.key }.map { key, stored in
            ["idHMAC": .string(key), "csrf": .string(stored.csrfToken), "expiresAtMs": .integer(stored.expiresAt.milliseconds)]
        }
        do {
            try PrivateFiles.replaceFileDurably(file, (["sessions": .array(entries)] as JSONValue).serializedBytes())
        } catch {
            logger.error("admin sessions not saved; a restart brings back the file's older ones", [("path", file), ("error", "\(error)")])
        }
    }

    private static func load(_ file: String, now: Timestamp, logger: Logger) -> [String: Stored] {
        guard PrivateFiles.exists(file) else { return [:] }
        guard let bytes = try? PrivateFiles.readAll(file), let json = try? JSONValue.parse(bytes),
              let entries = json["sessions"]?.arrayValue
        else {
            logger.warning("admin sessions file unreadable; everyone logs in again", [("path", file)])
            return [:]
        }
        var sessions: [String: Stored] = [:]
        for entry in entries {
            guard let key = entry["idHMAC"]?.stringValue, key.utf8.count == 64,
                  let csrf = entry["csrf"]?.stringValue, let expires = entry["expiresAtMs"]?.int64Value,
                  expires > now.milliseconds
            else { continue }
            sessions[key] = Stored(csrfToken: csrf, expiresAt: Timestamp(milliseconds: expires))
        }
        return sessions
    }
}
