import StoreRelayCore

/// How a webhook destination is delivered to (`destination NAME webhook URL { ... }`).
public struct WebhookOptions: Sendable, Hashable {
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
    /// Extra headers in order; never one StoreRelay sets itself.
    public var headers: [Header] = []
    /// An extra PEM CA file trusted for this destination's HTTPS, as written.
    public var caFile: String?
    /// Body format, timeout, concurrency and retry limits, as for every kind.
    public var delivery = DeliveryOptions()

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
