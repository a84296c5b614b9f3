public import StoreRelayCore
public import StoreRelayCrypto

/// Verifies App Store JWS the way Apple's App Store Server Library does (offline mode):
/// ES256 only; `x5c` of exactly three certificates; leaf ← `x5c[1]` ← a trusted root, where
/// `x5c[2]` is never trusted; Apple's marker OIDs on the leaf and the intermediate; every
/// certificate valid at the payload's `signedDate` (an app transaction's `receiptCreationDate`;
/// now, when it has none); and the ES256 signature over `header.payload` with the leaf's key.
/// Extra roots may be trusted for some environments only (`environmentRoots`).
///
/// Thread-safe: immutable configuration, a locked chain cache and locked counters.
public final class SignedDataVerifier: Sendable {
    /// Apple's "Mac App Store and iTunes Store Receipt Signing" leaf marker.
    public static let leafMarkerOID = "1.2.840.113635.100.6.11.1"
    /// Apple's "Worldwide Developer Relations" intermediate marker.
    public static let intermediateMarkerOID = "1.2.840.113635.100.6.2.1"

    public let configuration: VerifierConfiguration
    /// The roots trusted for every environment, and their verified chains.
    private let everywhere: TrustDomain
    /// Per environment with roots of its own: those plus `everywhere`'s, with a cache of its
    /// own, so a chain verified for sandbox is never taken as verified for production.
    private let byEnvironment: [AppStoreEnvironment: TrustDomain]
    /// Headers already decoded: a notification and its nested JWS usually share one.
    let headers = JWSHeaderCache()
    private let counters = Locked(VerifierStatistics())

    public init(configuration: VerifierConfiguration = VerifierConfiguration()) throws(CryptoError) {
        self.configuration = configuration
        everywhere = try TrustDomain(roots: configuration.trustedRoots, cacheCapacity: configuration.chainCacheCapacity)
        var byEnvironment: [AppStoreEnvironment: TrustDomain] = [:]
        for (environment, roots) in configuration.environmentRoots where !roots.isEmpty {
            byEnvironment[environment] = try TrustDomain(
                roots: configuration.trustedRoots + roots, cacheCapacity: configuration.chainCacheCapacity)
        }
        self.byEnvironment = byEnvironment
    }

    /// Trusted roots and the chains verified against them.
    private struct TrustDomain: Sendable {
        let chainVerifier: CertificateChainVerifier
        let cache: ChainCache

        init(roots: [Certificate], cacheCapacity: Int) throws(CryptoError) {
            chainVerifier = try CertificateChainVerifier(trustedRoots: roots)
            cache = ChainCache(capacity: cacheCapacity)
        }
    }

    /// The roots that may vouch for data of `environment`; only the common ones when the
    /// environment is unknown.
    private func domain(for environment: AppStoreEnvironment?) -> TrustDomain {
        environment.flatMap { byEnvironment[$0] } ?? everywhere
    }

    /// What this verifier has done so far.
    public var statistics: VerifierStatistics { counters.current }

    /// Verifies one standalone signed value (`signedTransactionInfo`, `signedRenewalInfo`,
    /// `signedAppTransactionInfo`, or any App Store JWS) at its own effective date.
    public func verify(_ jws: String) throws(VerificationError) -> VerifiedSignedData {
        let decoded = try DecodedJWS(compact: jws, headers: headers)
        let environment = decoded.payloadEnvironment
        let skip = environment.map { configuration.effectiveUnverifiedEnvironments.contains($0) } ?? false
        return try verify(decoded, at: .guessed(for: decoded.payload), for: environment, skippingSignature: skip)
    }

    /// Verifies an already decoded JWS of `environment` at the date its `dateField` holds, or
    /// only decodes that date when `skippingSignature`.
    func verify(
        _ decoded: DecodedJWS, at dateField: DecodedJWS.DateField, for environment: AppStoreEnvironment?,
        skippingSignature: Bool
    ) throws(VerificationError) -> VerifiedSignedData {
        let effectiveDate = try decoded.effectiveDate(dateField)
        if skippingSignature {
            counters.withLock { $0.unverifiedAccepted += 1 }
        } else {
            try authenticate(decoded, at: effectiveDate ?? configuration.clock.now(), for: environment)
        }
        return VerifiedSignedData(decoded: decoded, effectiveDate: effectiveDate, signatureVerified: !skippingSignature)
    }

    /// Takes a nested JWS whose header is byte-equal to its notification's, already
    /// authenticated, as covered by the notification's signature (`.chainEquality`): its
    /// date must still be readable, but no signature or chain is checked for it alone.
    func coveredByOuter(_ decoded: DecodedJWS, at dateField: DecodedJWS.DateField) throws(VerificationError) -> VerifiedSignedData {
        let effectiveDate = try decoded.effectiveDate(dateField)
        counters.withLock { $0.nestedChainMatches += 1 }
        return VerifiedSignedData(decoded: decoded, effectiveDate: effectiveDate, signatureVerified: true, coveredByOuterSignature: true)
    }

    /// Checks algorithm, chain (to a root trusted for `environment`), OIDs, validity at `time`
    /// and the signature.
    public func authenticate(
        _ jws: DecodedJWS, at time: Timestamp, for environment: AppStoreEnvironment?
    ) throws(VerificationError) {
        guard let algorithm = jws.algorithm, algorithm == "ES256" else {
            let shown = jws.algorithm.map { "\"\($0.prefix(20))\"" } ?? "missing"
            throw .signature(.unsupportedAlgorithm, "the JWS algorithm is \(shown); only ES256 is accepted")
        }
        guard let x5c = jws.header["x5c"]?.arrayValue else {
            throw .signature(.invalidChainLength, "the JWS header has no x5c certificate chain")
        }
        let texts = x5c.compactMap(\.stringValue)
        guard x5c.count == 3, texts.count == 3 else {
            throw .signature(.invalidChainLength, "the x5c chain must hold exactly 3 certificates, found \(x5c.count)")
        }
        // A signature that cannot be valid costs no chain work.
        guard ECDSASignature.isWellFormedRaw(jws.signature) else {
            throw .signature(.invalidSignature,
                             "the ES256 signature must be 64 bytes holding R and S in [1, n-1], found \(jws.signature.count) bytes")
        }

        let chain = Array(texts[0..<2])
        let domain = domain(for: environment)
        let entry: VerifiedChainEntry
        if let cached = domain.cache.entry(for: chain) {
            counters.withLock { $0.chainCacheHits += 1 }
            guard cached.isValid(at: time) else {
                throw .signature(.certificateExpired,
                                 "a certificate of the chain is not valid at \(time.iso8601) (chain valid \(cached.validFrom.iso8601) to \(cached.validUntil.iso8601))")
            }
            if !cached.knowsThirdCertificate(texts[2]) {
                _ = try Self.certificate(texts[2], index: 2)
                cached.rememberThirdCertificate(texts[2])
            }
            entry = cached
        } else {
            entry = try verifyChain(texts, at: time, with: domain.chainVerifier)
            domain.cache.insert(entry, for: chain)
        }

        counters.withLock { $0.signatureVerifications += 1 }
        guard entry.leafKey.isValidES256Signature(jws.signature, digest: jws.signingInputDigest) else {
            throw .signature(.invalidSignature, "the ES256 signature does not match the signed data")
        }
    }

    /// Full verification of `x5c` (a cache miss).
    private func verifyChain(
        _ texts: [String], at time: Timestamp, with chainVerifier: CertificateChainVerifier
    ) throws(VerificationError) -> VerifiedChainEntry {
        var certificates: [Certificate] = []
        for (index, text) in texts.enumerated() {
            certificates.append(try Self.certificate(text, index: index))
        }
        let leaf = certificates[0], intermediate = certificates[1]
        // certificates[2] is parsed (Apple's libraries require it) but never used: the chain
        // must end at one of our own roots.
        guard leaf.hasExtension(oid: SignedDataVerifier.leafMarkerOID) else {
            throw .signature(.missingAppleOID, "the leaf certificate lacks Apple's marker OID \(SignedDataVerifier.leafMarkerOID)")
        }
        guard intermediate.hasExtension(oid: SignedDataVerifier.intermediateMarkerOID) else {
            throw .signature(.missingAppleOID, "the intermediate certificate lacks Apple's marker OID \(SignedDataVerifier.intermediateMarkerOID)")
        }
        counters.withLock { $0.chainVerifications += 1 }
        let chain: VerifiedChain
        do {
            chain = try chainVerifier.verify(leaf: leaf, intermediates: [intermediate], at: time)
        } catch {
            if error.code == .certificateExpired || error.code == .certificateNotYetValid {
                throw .signature(.certificateExpired, "\(error.reason) (validation time \(time.iso8601))")
            }
            throw .signature(.untrustedChain, "the x5c chain does not lead to a trusted root: \(error.reason)")
        }
        let key: PublicKey
        do {
            key = try leaf.publicKey()
        } catch {
            throw .signature(.invalidCertificate, "the leaf public key cannot be read (\(error.reason))")
        }
        guard key.isP256 else {
            throw .signature(.invalidCertificate, "the leaf key is not an EC P-256 key, so it cannot sign ES256")
        }
        return VerifiedChainEntry(leafKey: key, validFrom: chain.validFrom, validUntil: chain.validUntil,
                                  thirdCertificate: texts[2])
    }

    private static func certificate(_ text: String, index: Int) throws(VerificationError) -> Certificate {
        guard let der = Base64.decode(text) else {
            throw .signature(.invalidCertificate, "x5c[\(index)] is not valid base64")
        }
        do {
            return try Certificate(derBytes: der)
        } catch {
            throw .signature(.invalidCertificate, "x5c[\(index)] is not a valid certificate (\(error.reason))")
        }
    }
}
