import BenchKit
import Dispatch
import StoreRelayVerification
import StoreRelayCrypto
import StoreRelayCore
import StoreRelayDelivery

/// Verification alone, in this process, with the project's own `NotificationVerifier`
/// (compiled from the main package's sources): the ceiling the gateway could reach if
/// HTTP, JSON, journaling and delivery cost nothing. Compared with `openssl speed` ÷ 3 on one
/// core and on two, and split into its ES256 part (`PublicKey.isValidES256Signature`) and the
/// rest (base64, JSON, SHA-256, chain-cache lookup).
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
        Report.line("1 thread:  \(Format.rate(one.rate)) notifications = \(Format.fixed(one.rate / opensslOne * 100, 0))% of openssl speed ÷ 3 on one core (\(Format.rate(opensslOne))); \(Format.fixed(one.cpuMicroseconds, 1)) µs CPU each")
        Report.line("2 threads: \(Format.rate(two.rate)) notifications = \(Format.fixed(two.rate / opensslTwo * 100, 0))% of openssl speed -multi 2 ÷ 3 (\(Format.rate(opensslTwo))); \(Format.fixed(two.cpuMicroseconds, 1)) µs CPU each")

        // The ES256 part alone: the outer JWS's signature, as SignedDataVerifier checks it
        // (the digest is computed while decoding), and SHA-256 of its signing input.
        let parts = payloads[0].split(separator: ".")
        let message = Array(payloads[0].utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))
        let digest = SHA256.hash(message)
        let signature = Base64.urlDecode(parts[2])!
        let key = try context.authority.leaf.publicKey()
        for _ in 0..<64 { _ = key.isValidES256Signature(signature, digest: digest) }  // warm the context pool
        let es256 = Self.measure(threads: 1, seconds: 2) { _ in
            _ = key.isValidES256Signature(signature, digest: digest)
        }
        let sha = Self.measure(threads: 1, seconds: 1) { _ in
            _ = SHA256.hash(message)
        }
        let raw = try RawECDSA(leafPEM: readText(context.chain + "/leaf.pem") ?? "", rawSignature: signature, message: message)
        guard raw.verifyDigest(), raw.digestVerifyFresh(), key.isValidES256Signature(signature, for: message) else {
            throw BenchError("the outer signature does not verify in the micro-benchmark")
        }
        let rawDigest = Self.measure(threads: 1, seconds: 1) { _ in _ = raw.verifyDigest() }
        let rawFresh = Self.measure(threads: 1, seconds: 1) { _ in _ = raw.digestVerifyFresh() }
        Report.line("raw OpenSSL in this process: EVP_PKEY_verify of a precomputed digest, reused context \(Format.fixed(rawDigest.cpuMicroseconds, 1)) µs; EVP_MD_CTX_new + EVP_DigestVerifyInit + EVP_DigestVerify of the input \(Format.fixed(rawFresh.cpuMicroseconds, 1)) µs")
        let opensslMicroseconds = 1e6 / single.verificationsPerSecond
        Report.line("one ES256 check of a digest (PublicKey.isValidES256Signature: raw R‖S to DER, a pooled context, EVP_PKEY_verify): \(Format.fixed(es256.cpuMicroseconds, 1)) µs CPU = \(Format.fixed(es256.cpuMicroseconds / rawDigest.cpuMicroseconds * 100, 0))% of OpenSSL's reused-context check above; openssl speed verify: \(Format.fixed(opensslMicroseconds, 1)) µs; SHA-256 of the \(message.count)-byte signing input \(Format.fixed(sha.cpuMicroseconds, 1)) µs")
        Report.line("per notification: \(Format.fixed(one.cpuMicroseconds, 1)) µs CPU, of which 3 ES256 checks \(Format.fixed(3 * es256.cpuMicroseconds, 1)) µs (\(Format.fixed(3 * es256.cpuMicroseconds / one.cpuMicroseconds * 100, 0))%); the rest is base64, JSON, SHA-256 of the signing inputs and cache lookups")
        try measureAroundVerification(corpus: corpus, verifier: verifier)
    }

    /// What the gateway does around the verifier, in this process: reading `signedPayload`
    /// out of the body, then normalizing the verified notification and encoding its journal
    /// record (`NotificationProcessor` and `StoredNotification.encoded`, one thread).
    private func measureAroundVerification(corpus: Corpus, verifier: NotificationVerifier) throws {
        let bodies = corpus.requests.prefix(200).map(Self.body)
        let verified = try bodies.map { body in
            guard let payload = try JSONValue.parse(body)["signedPayload"]?.stringValue else {
                throw BenchError("a corpus body has no signedPayload")
            }
            return try verifier.verify(signedPayload: payload)
        }
        let receivedAt = Timestamp.now()
        let bodyParse = Self.measure(threads: 1, seconds: 2) { index in
            _ = try? JSONValue.parse(bodies[index % bodies.count])["signedPayload"]?.stringValue
        }
        let normalize = Self.measure(threads: 1, seconds: 2) { index in
            let notification = verified[index % verified.count]
            guard let payload = notification.payload.objectValue else { return }
            let content = NotificationContent(
                payload: payload,
                transaction: notification.transaction.map { .object($0.payload) },
                renewal: notification.renewal.map { .object($0.payload) },
                appTransaction: notification.appTransaction.map { .object($0.payload) },
                environment: notification.environment)
            guard let event = try? NormalizedEvent(content: content, receivedAt: receivedAt) else { return }
            let stored = StoredNotification(event: event, disposition: .accept, destinations: ["queue"],
                                            body: bodies[index % bodies.count], receivedAt: receivedAt)
            _ = stored.encoded()
        }
        // The verifier's decoding alone, without curve arithmetic or chain lookups: the outer
        // JWS and the JWS nested in its payload, as `NotificationVerifier` decodes them.
        let payloads = bodies.compactMap { (try? JSONValue.parse($0))?["signedPayload"]?.stringValue }
        let decodeOnly = Self.measure(threads: 1, seconds: 2) { index in
            guard let outer = try? DecodedJWS(compact: payloads[index % payloads.count]),
                  let data = outer.payload["data"]?.objectValue else { return }
            for field in ["signedTransactionInfo", "signedRenewalInfo"] {
                if let text = data[field]?.stringValue { _ = try? DecodedJWS(compact: text) }
            }
        }
        Report.line("decoding alone (outer + nested JWS and their SHA-256, no signature check, no header cache): \(Format.fixed(decodeOnly.cpuMicroseconds, 1)) µs CPU")
        Report.line("around the verifier: body JSON -> signedPayload \(Format.fixed(bodyParse.cpuMicroseconds, 1)) µs CPU; normalize + encode the journal record \(Format.fixed(normalize.cpuMicroseconds, 1)) µs CPU")
    }

    /// The body of a complete HTTP request.
    static func body(_ request: [UInt8]) -> [UInt8] {
        var index = 3
        while index < request.count {
            if request[index - 3] == 13, request[index - 2] == 10, request[index - 1] == 13, request[index] == 10 {
                return Array(request[(index + 1)...])
            }
            index += 1
        }
        return []
    }

    /// Calls per second of `work` on `threads` threads for `seconds` (wall clock, like
    /// `openssl speed` under load), and the CPU time per call in microseconds (which the
    /// other tenants of the machine disturb much less).
    static func measure(threads: Int, seconds: Double, _ work: @escaping @Sendable (Int) -> Void) -> (rate: Double, cpuMicroseconds: Double) {
        let totals = Locked((calls: 0, cpu: UInt64(0)))
        let started = Monotonic.nanoseconds()
        let deadline = started + UInt64(seconds * 1e9)
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            let cpu = Monotonic.threadCPUNanoseconds()
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
            let spent = Monotonic.threadCPUNanoseconds() - cpu
            totals.withLock { $0.calls += done; $0.cpu += spent }
        }
        let elapsed = Double(Monotonic.nanoseconds() - started) / 1e9
        let result = totals.current
        return (Double(result.calls) / elapsed, Double(result.cpu) / 1e3 / Double(result.calls))
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
