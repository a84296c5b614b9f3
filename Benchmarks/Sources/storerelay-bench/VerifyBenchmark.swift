import BenchKit
import Dispatch
import StoreRelayAppStore
import StoreRelayCrypto
import StoreRelaySupport

/// Verification alone, in this process, with the project's own `NotificationVerifier`
/// (compiled from the main package's sources): the ceiling the gateway could reach if
/// HTTP, JSON, journaling and delivery cost nothing. Compared with `openssl speed` ÷ 3 on one
/// core and on two, and split into its ES256 part (`PublicKey.isValidES256Signature`) and the
/// rest (base64, JSON, chain-cache lookup).
struct VerifyBenchmark {
    let context: BenchContext
    let single: OpenSSLSpeed
    let multi: OpenSSLSpeed

    func run() throws {
        Report.section("Verification alone (in-process NotificationVerifier, warm chain cache)")
        let corpus = try context.corpus(2_000)
        let payloads = corpus.requests.map(Self.signedPayload)
        let verifier = try NotificationVerifier(configuration: VerifierConfiguration(
            trustedRoots: [AppleRootCertificates.appleRootCAG3, try Certificate(pemString: readText(context.trustRoot) ?? "")]))
        _ = try verifier.verify(signedPayload: payloads[0])

        let one = Self.measure(threads: 1, seconds: 3) { index in
            _ = try? verifier.verify(signedPayload: payloads[index % payloads.count])
        }
        let two = Self.measure(threads: 2, seconds: 3) { index in
            _ = try? verifier.verify(signedPayload: payloads[index % payloads.count])
        }
        let statistics = verifier.statistics
        guard statistics.chainVerifications == 1 else {
            throw BenchError("the chain cache missed \(statistics.chainVerifications) times")
        }
        let opensslOne = single.verificationsPerSecond / 3
        let opensslTwo = multi.verificationsPerSecond / 3
        Report.line("1 thread:  \(Format.rate(one)) notifications = \(Format.fixed(one / opensslOne * 100, 0))% of openssl speed ÷ 3 on one core (\(Format.rate(opensslOne)))")
        Report.line("2 threads: \(Format.rate(two)) notifications = \(Format.fixed(two / opensslTwo * 100, 0))% of openssl speed -multi 2 ÷ 3 (\(Format.rate(opensslTwo)))")

        // The ES256 part alone: the outer JWS's signature, as SignedDataVerifier checks it.
        let parts = payloads[0].split(separator: ".")
        let message = Array(payloads[0].utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))
        let signature = Base64.urlDecode(parts[2])!
        let key = try context.authority.leaf.publicKey()
        let es256 = Self.measure(threads: 1, seconds: 2) { _ in
            _ = key.isValidES256Signature(signature, for: message)
        }
        Report.line("PublicKey.isValidES256Signature over a \(message.count)-byte signing input: \(Format.rate(es256)) = \(Format.fixed(es256 / single.verificationsPerSecond * 100, 0))% of openssl speed verify/s on one core (\(Format.rate(single.verificationsPerSecond)))")
        let perNotification = 1e6 / one
        let perSignature = 1e6 / es256
        Report.line("per notification: \(Format.fixed(perNotification, 1)) µs, of which 3 × ES256 = \(Format.fixed(3 * perSignature, 1)) µs (\(Format.fixed(3 * perSignature / perNotification * 100, 0))%); the rest is decoding, JSON and cache lookups")
    }

    /// Calls per second of `work` on `threads` threads for `seconds`.
    static func measure(threads: Int, seconds: Double, _ work: @escaping @Sendable (Int) -> Void) -> Double {
        let counts = Locked([Int](repeating: 0, count: threads))
        let started = Monotonic.nanoseconds()
        let deadline = started + UInt64(seconds * 1e9)
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            var done = 0
            var index = thread * 7_919
            while true {
                for _ in 0..<16 {
                    work(index)
                    index += 1
                }
                done += 16
                if Monotonic.nanoseconds() >= deadline { break }
            }
            counts.withLock { $0[thread] = done }
        }
        let elapsed = Double(Monotonic.nanoseconds() - started) / 1e9
        return Double(counts.current.reduce(0, +)) / elapsed
    }

    /// The JWS inside a request's body `{"signedPayload":"..."}`.
    static func signedPayload(_ request: [UInt8]) -> String {
        let text = String(decoding: request, as: UTF8.self)
        let marker = "\"signedPayload\":\""
        let start = text.range(of: marker)!.upperBound
        let end = text[start...].firstIndex(of: "\"")!
        return String(text[start..<end])
    }
}
