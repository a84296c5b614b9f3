import StoreRelayCore
import StoreRelayCrypto

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
    /// The Standard Webhooks secrets, `whsec_<base64>`, newest first: none (requests are not
    /// signed), one, or two during a rotation (`signing-secret NEW OLD`), when every request
    /// carries a signature by each so receivers holding either verify it.
    public var signingSecrets: [ConfigSecret] = []
    /// Extra headers in order; never one StoreRelay sets itself.
    public var headers: [Header] = []
    /// An extra PEM CA file trusted for this destination's HTTPS, as written.
    public var caFile: String?
    /// Body format, timeout, concurrency and retry limits, as for every kind.
    public var delivery = DeliveryOptions()

    public init(url: WebhookURL) { self.url = url }

    /// The most secrets `signing-secret` takes: the new one and the one it replaces.
    public static let maxSigningSecrets = 2

    /// The newest signing secret; nil: requests are not signed.
    public var signingSecret: ConfigSecret? { signingSecrets.first }

    /// The HMAC key of ``signingSecret``: the bytes its base64 part decodes to (validated when
    /// the configuration was parsed).
    public var signingKey: [UInt8]? { signingKeys.first }

    /// The HMAC keys of ``signingSecrets``, newest first: one signature each.
    public var signingKeys: [[UInt8]] { signingSecrets.compactMap { Self.decodeSigningSecret($0.value) } }

    /// What `storerelay check` shows of each signing secret, newest first: `sha256:` and the
    /// first 8 hex digits of the SHA-256 of its key. Enough to tell which secret a deployment
    /// holds and compare it with a receiver's, too short to help guess the key.
    public var signingSecretFingerprints: [String] {
        signingKeys.map { "sha256:" + String(SHA256.hexHash($0).prefix(8)) }
    }

    /// The key bytes of a `whsec_<base64>` secret, nil when it is not one.
    static func decodeSigningSecret(_ text: String) -> [UInt8]? {
        guard text.hasPrefix("whsec_") else { return nil }
        guard let key = Base64.decode(text.dropFirst(6)), !key.isEmpty else { return nil }
        return key
    }
}
