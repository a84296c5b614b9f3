public import StoreRelayCore

/// How App Store signed data is verified. Every field has a safe default.
public struct VerifierConfiguration: Sendable {
    /// Roots a chain may end at. Apple Root CA - G3 by default; `trust-root` files add to it
    /// (tests, `storerelay simulate`). Certificates sent inside a JWS are never trusted.
    public var trustedRoots: [Certificate]

    /// Roots trusted only for data of one environment, in addition to `trustedRoots`: a dev
    /// CA trusted for sandbox (`trust-root FILE sandbox`) cannot vouch for production.
    public var environmentRoots: [AppStoreEnvironment: [Certificate]]

    /// The time used when a payload carries no `signedDate`, injectable for tests.
    public var clock: any TimeSource

    /// Environments whose data is accepted without any signature or chain check, as Apple's
    /// libraries do when configured for Xcode or LocalTesting (their data is signed by a
    /// local, self-signed key). Empty by default. Only `.xcode` and `.localtesting` are
    /// honoured: production and sandbox are always verified, whatever is listed here.
    public var unverifiedEnvironments: Set<AppStoreEnvironment>

    /// How many verified chains (by their certificate bytes) to remember; Apple rotates its
    /// leaf roughly every two years, so a handful covers steady traffic.
    public var chainCacheCapacity: Int

    /// How the JWS nested in a notification are checked (`verify-nested`); by default only
    /// that their header equals the notification's (see `NestedSignatureCheck`).
    public var nestedSignatures: NestedSignatureCheck = .chainEquality

    public init(
        trustedRoots: [Certificate] = [AppleRootCertificates.appleRootCAG3],
        environmentRoots: [AppStoreEnvironment: [Certificate]] = [:],
        clock: any TimeSource = WallClock(),
        unverifiedEnvironments: Set<AppStoreEnvironment> = [],
        chainCacheCapacity: Int = 32
    ) {
        self.trustedRoots = trustedRoots
        self.environmentRoots = environmentRoots
        self.clock = clock
        self.unverifiedEnvironments = unverifiedEnvironments
        self.chainCacheCapacity = chainCacheCapacity
    }

    /// `unverifiedEnvironments` restricted to the environments where skipping is allowed.
    var effectiveUnverifiedEnvironments: Set<AppStoreEnvironment> {
        unverifiedEnvironments.intersection([.xcode, .localtesting])
    }
}

/// How the JWS nested in a notification's payload (`signedTransactionInfo`,
/// `signedRenewalInfo`, `signedAppTransactionInfo`) are checked. The outer signature covers
/// them byte for byte either way; README's "What verification checks" weighs the two.
public enum NestedSignatureCheck: String, Sendable, Hashable {
    /// A nested JWS whose protected header is byte-equal to the notification's (same `alg`,
    /// same `x5c` chain, already verified for the notification) is taken as covered by the
    /// outer signature: its own signature is not checked and its certificates are judged at
    /// the notification's `signedDate`. One that differs gets the full check.
    case chainEquality
    /// Every nested JWS is verified on its own: chain, OIDs, validity at its own date, ES256
    /// (`verify-nested yes`; always for `storerelay verify`).
    case full
}

/// Counters of the verification work done, to observe the chain cache.
public struct VerifierStatistics: Sendable, Hashable {
    /// ES256 verifications of a JWS signature (one per verified JWS).
    public var signatureVerifications = 0
    /// Full chain verifications with OpenSSL (cache misses that got as far as the chain).
    public var chainVerifications = 0
    /// JWS whose chain was found in the cache.
    public var chainCacheHits = 0
    /// JWS accepted without checks because their environment is in `unverifiedEnvironments`.
    public var unverifiedAccepted = 0
    /// Nested JWS taken as covered by the notification's signature: their header equals the
    /// notification's (`NestedSignatureCheck.chainEquality`), so no signature check of their own.
    public var nestedChainMatches = 0

    public init() {}
}
