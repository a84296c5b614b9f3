import StoreRelayCrypto
import StoreRelayCore

/// Google's side of a Pub/Sub push, for tests: RSA keys generated here (never shared
/// fixtures), the JWKS document that publishes them, RS256 push tokens with any claims, and
/// push bodies wrapping a DeveloperNotification.
///
/// Built only from the Crypto and Core modules and written out by hand, so it does not
/// share the verifier's code paths for the token and key set layout.
public final class PlayPushSigner: @unchecked Sendable {
    // Invariant: `keys` is set once in init.
    public let keys: [String: RSAPrivateKey]

    public static let audience = "https://relay.example.test/play"
    public static let account = "pubsub-push@storerelay-test.iam.gserviceaccount.com"
    public static let package = "com.acme.journal"

    public init(kids: [String] = ["key-1"]) throws {
        var keys: [String: RSAPrivateKey] = [:]
        for kid in kids { keys[kid] = try RSAPrivateKey.generate() }
        self.keys = keys
    }

    /// The JWKS document publishing `kids` (default: every key), as Google's certs URL serves it.
    public func keySetDocument(_ kids: [String]? = nil) throws -> String {
        var entries: [String] = []
        for kid in (kids ?? keys.keys.sorted()) {
            guard let key = keys[kid] else { continue }
            let (n, e) = try key.publicKey().components()
            entries.append(#"{"kty":"RSA","alg":"RS256","use":"sig","kid":"\#(kid)","n":"\#(Base64.urlEncode(n))","e":"\#(Base64.urlEncode(e))"}"#)
        }
        return #"{"keys":[\#(entries.joined(separator: ","))]}"#
    }

    /// Google's claims for a push token issued at `now` (seconds), valid an hour.
    public static func claims(now: Int64, audience: String = audience, email: String = account) -> [(String, JSONValue)] {
        [("aud", .string(audience)), ("azp", "1234567890"), ("email", .string(email)), ("email_verified", true),
         ("exp", .integer(now + 3600)), ("iat", .integer(now)), ("iss", "https://accounts.google.com"), ("sub", "1234567890")]
    }

    /// `header.claims.signature`, RS256 with key `kid` (or `signWith`), the header
    /// `{"alg":"RS256","kid":...,"typ":"JWT"}` unless given.
    /// `claimsText` replaces the claims' JSON text (for JSON no serializer writes, such as a
    /// duplicate member).
    public func token(kid: String = "key-1", claims: [(String, JSONValue)], header: String? = nil,
                      signWith: String? = nil, claimsText: String? = nil) throws -> String {
        let headerText = header ?? #"{"alg":"RS256","kid":"\#(kid)","typ":"JWT"}"#
        let claimsText = claimsText ?? JSONValue.object(JSONObject(claims.map { (key: $0.0, value: $0.1) })).serialized()
        let input = Base64.urlEncode(Array(headerText.utf8)) + "." + Base64.urlEncode(Array(claimsText.utf8))
        guard let key = keys[signWith ?? kid] ?? keys.values.first else { return input + "." }
        return input + "." + Base64.urlEncode(try key.signRS256(Array(input.utf8)))
    }

    /// A valid token for now (wall clock).
    public func validToken(kid: String = "key-1", now: Int64 = Timestamp.now().seconds) throws -> String {
        try token(kid: kid, claims: Self.claims(now: now))
    }

    /// A push body wrapping `data` (the DeveloperNotification's JSON text) as Pub/Sub sends it.
    public static func body(messageId: String, data: String, subscription: String = "projects/acme/subscriptions/play-push") -> String {
        let encoded = Base64.encode(Array(data.utf8))
        return #"{"message":{"attributes":{},"data":"\#(encoded)","messageId":"\#(messageId)","message_id":"\#(messageId)","publishTime":"2026-11-20T10:15:30.123Z","publish_time":"2026-11-20T10:15:30.123Z"},"subscription":"\#(subscription)"}"#
    }

    /// A subscription notification of `type` (1...20 and beyond).
    public static func subscriptionNotification(type: Int, package: String = package, token: String = "purchase-token-1",
                                                subscriptionId: String = "premium.monthly", eventTime: Int64 = Timestamp.now().milliseconds) -> String {
        #"{"version":"1.0","packageName":"\#(package)","eventTimeMillis":"\#(eventTime)","subscriptionNotification":{"version":"1.0","notificationType":\#(type),"purchaseToken":"\#(token)","subscriptionId":"\#(subscriptionId)"}}"#
    }

    public static func oneTimeProductNotification(type: Int, package: String = package, token: String = "purchase-token-2",
                                                  sku: String = "coins.100", eventTime: Int64 = Timestamp.now().milliseconds) -> String {
        #"{"version":"1.0","packageName":"\#(package)","eventTimeMillis":"\#(eventTime)","oneTimeProductNotification":{"version":"1.0","notificationType":\#(type),"purchaseToken":"\#(token)","sku":"\#(sku)"}}"#
    }

    public static func voidedPurchaseNotification(package: String = package, token: String = "purchase-token-3",
                                                  orderId: String = "GPA.1234-5678-9012-34567", eventTime: Int64 = Timestamp.now().milliseconds) -> String {
        #"{"version":"1.0","packageName":"\#(package)","eventTimeMillis":"\#(eventTime)","voidedPurchaseNotification":{"purchaseToken":"\#(token)","orderId":"\#(orderId)","productType":1,"refundType":1}}"#
    }

    public static func testNotification(package: String = package, eventTime: Int64 = Timestamp.now().milliseconds) -> String {
        #"{"version":"1.0","packageName":"\#(package)","eventTimeMillis":"\#(eventTime)","testNotification":{"version":"1.0"}}"#
    }
}
