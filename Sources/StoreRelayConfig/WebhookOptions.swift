import StoreRelayCore

/// How a webhook destination is delivered to (`destination NAME webhook URL { ... }`).
public struct WebhookOptions: Sendable, Hashable {
    /// What the request body holds.
    public enum Format: String, Sendable, Hashable {
        /// The normalized event JSON (default).
        case normalized
        /// Apple's original body, byte for byte.
        case apple
    }

    /// An extra request header (`header NAME VALUE`). Its value often is a credential, so
    /// descriptions and mirrors show `<set>` instead.
    public struct Header: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
        public var name: String
        public var value: String
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }

        public var description: String { "\(name): <set>" }
        public var debugDescription: String { description }
        public var customMirror: Mirror { Mirror(self, children: ["name": name], displayStyle: .struct) }
    }

    /// Where to POST.
    public var url: WebhookURL
    /// The Standard Webhooks secret, `whsec_<base64>`; nil: requests are not signed.
    public var signingSecret: ConfigSecret?
    /// Body format; default normalized.
    public var format: Format = .normalized
    /// Whether normalized events carry Apple's body in `raw`; default no.
    public var includeRaw: Bool = false
    /// Extra headers in order; never one StoreRelay sets itself.
    public var headers: [Header] = []
    /// An extra PEM CA file trusted for this destination's HTTPS, as written.
    public var caFile: String?
    /// Limit for one attempt, connect to response; default 10s.
    public var timeout: Duration = .seconds(10)
    /// Attempts in flight at once to this destination; default 4.
    public var concurrency: Int = 4
    /// Attempts before dead-lettering with reason `exhausted`; default 12.
    public var maxAttempts: Int = 12
    /// First retry delay (exponential backoff with jitter starts here); default 1s.
    public var backoffInitial: Duration = .seconds(1)
    /// Largest retry delay; default 1h.
    public var backoffMaximum: Duration = .seconds(3600)
    /// Age after which an event is dead-lettered however many attempts it had; default 72h.
    public var maxAge: Duration = .seconds(72 * 3600)

    public init(url: WebhookURL) { self.url = url }

    /// The HMAC key of ``signingSecret``: the bytes its base64 part decodes to (validated when
    /// the configuration was parsed).
    public var signingKey: [UInt8]? {
        guard let text = signingSecret?.value else { return nil }
        return Self.decodeSigningSecret(text)
    }

    /// The key bytes of a `whsec_<base64>` secret, nil when it is not one.
    static func decodeSigningSecret(_ text: String) -> [UInt8]? {
        guard text.hasPrefix("whsec_") else { return nil }
        guard let key = Base64.decode(text.dropFirst(6)), !key.isEmpty else { return nil }
        return key
    }
}
