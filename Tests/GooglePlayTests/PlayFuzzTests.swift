import Testing
import StoreRelayGooglePlay
import StoreRelayCore
import StoreRelayTestSupport

/// Random mutations of a valid push token and of a valid push body: never a crash, and a
/// mutated token is never accepted unless it still says exactly what was signed.
@Suite struct PlayFuzzTests {
    static let signer = try! PlayPushSigner(kids: ["key-1"])
    let alphabet = Array("ABCxyz019-_+/=.{}\"[]:,\\ \u{0}é".utf8)

    func mutate(_ original: [UInt8], _ random: inout SeededGenerator, reencode: Bool) -> [UInt8] {
        var bytes = original
        for _ in 0...Int.random(in: 0..<3, using: &random) {
            guard !bytes.isEmpty else { break }
            let at = Int.random(in: 0..<bytes.count, using: &random)
            switch Int.random(in: 0..<7, using: &random) {
            case 0: bytes[at] ^= UInt8.random(in: 1...255, using: &random)
            case 1: bytes[at] = alphabet.randomElement(using: &random)!
            case 2: bytes.remove(at: at)
            case 3: bytes.insert(alphabet.randomElement(using: &random)!, at: at)
            case 4: bytes = Array(bytes[..<at])
            case 5: bytes.insert(contentsOf: bytes[at..<min(bytes.count, at + 40)], at: at)
            default:
                guard reencode else { continue }
                // Mutate the decoded header or claims, then encode again, so the JSON and
                // claim checks are reached, not only base64.
                var segments = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false).map(Array.init)
                guard segments.count == 3, var decoded = Base64.urlDecode(String(decoding: segments[at % 2], as: UTF8.self)),
                      !decoded.isEmpty else { continue }
                decoded[Int.random(in: 0..<decoded.count, using: &random)] = alphabet.randomElement(using: &random)!
                segments[at % 2] = Array(Base64.urlEncode(decoded).utf8)
                bytes = Array(segments.joined(separator: [UInt8(ascii: ".")]))
            }
        }
        return bytes
    }

    @Test func mutatedTokensNeverCrashOrVerify() throws {
        let now: Int64 = 1_800_000_000
        let keys = try JSONWebKeySet(json: Array(try Self.signer.keySetDocument().utf8))
        let verifier = PushTokenVerifier(subscribers: [.init(audience: PlayPushSigner.audience, account: PlayPushSigner.account)])
        let original = Array(try Self.signer.token(claims: PlayPushSigner.claims(now: now)).utf8)
        let time = Timestamp(seconds: now)
        guard case .valid = verifier.verify(authorization: "Bearer " + String(decoding: original, as: UTF8.self), keys: keys, now: time) else {
            Issue.record("the unmutated token must verify")
            return
        }
        var random = SeededGenerator(seed: 0x90_0613_2026)
        var refused = 0
        for _ in 0..<3000 {
            let mutated = mutate(original, &random, reencode: true)
            let text = String(decoding: mutated, as: UTF8.self)
            if case .valid = verifier.verify(authorization: "Bearer " + text, keys: keys, now: time) {
                // Only a change base64url cannot see (the unused low bits of a final
                // character) may still verify: the decoded token must be the original's.
                let same = try PushToken.parse(token: mutated)
                let base = try PushToken.parse(token: original)
                #expect(same.header == base.header && same.claims == base.claims && same.signature == base.signature,
                        "a mutated token verified: \(text.prefix(120))")
            } else {
                refused += 1
            }
        }
        #expect(refused > 2900)
    }

    @Test func mutatedBodiesNeverCrash() throws {
        let notifications = [
            PlayPushSigner.subscriptionNotification(type: 2), PlayPushSigner.oneTimeProductNotification(type: 1),
            PlayPushSigner.voidedPurchaseNotification(), PlayPushSigner.testNotification(),
        ]
        var random = SeededGenerator(seed: 0xB0D1_2026)
        var read = 0
        for round in 0..<4000 {
            let data = notifications[round % notifications.count]
            // Half the rounds mutate the decoded notification (then encode it), half the body.
            let body: [UInt8]
            if round % 2 == 0 {
                let mutated = String(decoding: mutate(Array(data.utf8), &random, reencode: false), as: UTF8.self)
                body = Array(PlayPushSigner.body(messageId: "\(round)", data: mutated).utf8)
            } else {
                body = mutate(Array(PlayPushSigner.body(messageId: "\(round)", data: data).utf8), &random, reencode: false)
            }
            guard let push = try? PubSubPush.parse(body), let notification = try? DeveloperNotification.parse(push.data) else { continue }
            read += 1
            let event = PlayEvent.normalize(push: push, notification: notification, receivedAt: Timestamp(milliseconds: 0))
            #expect(event.id == push.messageId)
            #expect(!event.type.isEmpty)
        }
        #expect(read > 100)
    }
}
