import FuzzSupport
import StoreRelayGooglePlay
import StoreRelayVerification
import StoreRelayCrypto
import StoreRelayCore

/// libFuzzer target for what a Google Play push goes through before it is stored: the bearer
/// token (`PushToken`, `PushTokenVerifier`) and the body (`PubSubPush`, `DeveloperNotification`,
/// `PlayEvent`).
///
/// The input is `mode`, then NUL-separated parts: the token's header JSON, its claims JSON,
/// and a push body. The target signs `header.claims` itself with Google's key (mode 0), with
/// a key Google never published (mode 1), or not at all (mode 2: the token is the input's
/// header and claims parts taken as the compact token's text, or as base64url'd JSON with an
/// arbitrary signature). The whole input is also tried as an `Authorization` value and as a
/// body. Checked: no crash or hang; a token is valid only when Google's key signed it, its
/// header says RS256 and its claims pass an independent reading of the rules; a body read
/// as a push normalizes to an event with every key, its id the messageId, that reads back.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPlayPush(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = fuzzInput(data, size)
    PlayPushCheck.checkAuthorization(String(decoding: input, as: UTF8.self))
    PlayPushCheck.checkBody(input)
    guard let mode = input.first else { return 0 }
    let parts = input.dropFirst().split(separator: 0, maxSplits: 2, omittingEmptySubsequences: false).map(Array.init)
    let header = parts.first ?? []
    let claims = parts.count > 1 ? parts[1] : []
    if parts.count > 2 { PlayPushCheck.checkBody(parts[2]) }
    let input64 = Base64.urlEncode(header) + "." + Base64.urlEncode(claims)
    switch mode % 3 {
    case 0:
        let signature = (try? PlayPushCheck.google.signRS256(Array(input64.utf8))) ?? []
        PlayPushCheck.checkToken(input64 + "." + Base64.urlEncode(signature), signedByGoogle: true, header: header, claims: claims)
    case 1:
        let signature = (try? PlayPushCheck.rogue.signRS256(Array(input64.utf8))) ?? []
        PlayPushCheck.checkToken(input64 + "." + Base64.urlEncode(signature), signedByGoogle: false, header: header, claims: claims)
    default:
        PlayPushCheck.checkToken(String(decoding: header + [UInt8(ascii: ".")] + claims, as: UTF8.self), signedByGoogle: false,
                                 header: nil, claims: nil)
        PlayPushCheck.checkToken(input64 + "." + Base64.urlEncode(Array(parts.last?.prefix(256) ?? [])), signedByGoogle: false,
                                 header: nil, claims: nil)
    }
    return 0
}

enum PlayPushCheck {
    static let google = try! RSAPrivateKey.generate()
    static let rogue = try! RSAPrivateKey.generate()
    static let now: Int64 = 1_800_000_000
    static let audience = "https://relay.example.test/play"
    static let account = "pubsub-push@storerelay-test.iam.gserviceaccount.com"
    static let keys: JSONWebKeySet = {
        let document = try! JSONWebKeySet.document([("key-1", try! google.publicKey())])
        return try! JSONWebKeySet(json: Array(document.utf8))
    }()
    static let verifier = PushTokenVerifier(subscribers: [.init(audience: audience, account: account)])

    static func checkAuthorization(_ value: String) {
        for candidate in [value, "Bearer " + value] {
            let verdict = verifier.verify(authorization: candidate, keys: keys, now: Timestamp(seconds: now))
            // Nothing but a token this target signed can carry Google's signature.
            if case .valid = verdict { fuzzCheck(false, "an unsigned input verified: \(candidate.prefix(120))") }
        }
    }

    static func checkToken(_ token: String, signedByGoogle: Bool, header: [UInt8]?, claims: [UInt8]?) {
        let verdict = verifier.verify(authorization: "Bearer " + token, keys: keys, now: Timestamp(seconds: now))
        guard case .valid(let accepted) = verdict else { return }
        fuzzCheck(signedByGoogle, "a token Google did not sign verified: \(token.prefix(120))")
        guard let header, let claims,
              let headerValue = try? JSONValue.parse(header), let claimsValue = try? JSONValue.parse(claims) else {
            fuzzCheck(false, "a valid token whose parts are not JSON: \(token.prefix(120))")
            return
        }
        fuzzCheck(headerValue["alg"]?.stringValue == "RS256", "alg \(headerValue["alg"].map { $0.serialized() } ?? "missing") accepted")
        fuzzCheck(headerValue["kid"]?.stringValue == "key-1", "kid \(headerValue["kid"].map { $0.serialized() } ?? "missing") accepted")
        fuzzCheck(["https://accounts.google.com", "accounts.google.com"].contains(claimsValue["iss"]?.stringValue ?? ""), "iss accepted")
        fuzzCheck(claimsValue["aud"]?.stringValue == audience && accepted.audience == audience, "aud accepted")
        fuzzCheck(claimsValue["email"]?.stringValue == account && accepted.email == account, "email accepted")
        let verified = claimsValue["email_verified"]
        fuzzCheck(verified == .bool(true) || verified == .string("true"), "email_verified \(verified.map { $0.serialized() } ?? "missing") accepted")
        guard let exp = claimsValue["exp"]?.doubleValue else { return fuzzCheck(false, "no exp accepted") }
        fuzzCheck(exp + 60 >= Double(now), "an expired token accepted (exp \(exp))")
        if let iat = claimsValue["iat"] {
            fuzzCheck((iat.doubleValue?.rounded(.down) ?? .infinity) <= Double(now + 60), "iat \(iat.serialized()) accepted")
        }
    }

    static func checkBody(_ body: [UInt8]) {
        guard let push = try? PubSubPush.parse(body) else { return }
        fuzzCheck(!push.messageId.isEmpty && push.messageId.utf8.count <= PubSubPush.maximumMessageIdLength, "message id \(push.messageId.prefix(80))")
        // Written again, the push reads back the same.
        fuzzCheck((try? PubSubPush.parse(push.body())) == push, "a push does not survive being written again")
        let received = Timestamp(seconds: now)
        guard let notification = try? DeveloperNotification.parse(push.data) else {
            let event = PlayEvent.unreadable(body: body, push: push, packageName: nil, reason: "fuzz", receivedAt: received)
            fuzzCheck(event.id == push.messageId && event.json.keys == NormalizedEvent.keys, "unreadable event layout")
            return
        }
        let event = PlayEvent.normalize(push: push, notification: notification, receivedAt: received)
        fuzzCheck(event.id == push.messageId, "event id \(event.id.prefix(80)) is not the message id")
        fuzzCheck(event.json.keys == NormalizedEvent.keys, "event keys \(event.json.keys)")
        fuzzCheck(event.bundleId == notification.packageName, "bundle id")
        fuzzCheck((try? NormalizedEvent(storedJSON: event.jsonBytes())) == event, "the event does not read back")
    }
}
