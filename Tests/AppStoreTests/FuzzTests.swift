import Testing
import StoreRelayVerification
import StoreRelayCore
import StoreRelayTestSupport

@Suite struct FuzzTests {
    /// Random mutations of valid JWS must be rejected with a VerificationError, never crash,
    /// and never verify unless the input is unchanged.
    @Test func mutatedJWSNeverCrashOrVerify() throws {
        let authority = Fixtures.authority
        let now = Timestamp.now().milliseconds
        let nested = try authority.signJWS(payload: #"{"bundleId":"com.example.app","environment":"Sandbox","signedDate":\#(now)}"#)
        let original = try authority.signJWS(payload: notificationPayload(signedDate: now, extraData: #","signedTransactionInfo":"\#(nested)""#))
        let verifier = try Fixtures.testRootVerifier()
        _ = try verifier.verify(signedPayload: original)

        var random = SeededGenerator(seed: 0x5EED_2026)
        let alphabet = Array("ABCxyz019-_+/=.{}\"[]:,\\ \u{0}é".utf8)
        var rejected = 0
        for _ in 0..<3000 {
            var bytes = Array(original.utf8)
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
                    // Re-encode a mutated header or payload so the JSON layer is reached too.
                    var segments = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false).map(Array.init)
                    guard segments.count == 3, var decoded = Base64.urlDecode(String(decoding: segments[at % 2], as: UTF8.self)),
                          !decoded.isEmpty else { continue }
                    decoded[Int.random(in: 0..<decoded.count, using: &random)] = alphabet.randomElement(using: &random)!
                    segments[at % 2] = Array(Base64.urlEncode(decoded).utf8)
                    bytes = Array(segments.joined(separator: [UInt8(ascii: ".")]))
                }
            }
            let mutated = String(decoding: bytes, as: UTF8.self)
            do {
                _ = try verifier.verify(signedPayload: mutated)
                #expect(mutated == original, "a mutated JWS verified: \(mutated.prefix(80))")
            } catch {
                rejected += 1
            }
        }
        #expect(rejected > 2900)
    }
}
