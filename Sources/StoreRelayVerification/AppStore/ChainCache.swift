#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import StoreRelayCore
import StoreRelayCrypto

/// What a verified `x5c` chain proved, kept so the next JWS with the same chain costs one
/// ES256 verification instead of a chain build and two more signature checks.
///
/// The chain is the leaf and the intermediate: `x5c[2]` never takes part in verification
/// (the chain must end at one of our own roots), so it is no part of the cache key either.
/// Otherwise a sender could vary it to make every request a miss and a full chain build.
struct VerifiedChainEntry: Sendable {
    /// The leaf's key, which signs the JWS.
    let leafKey: PublicKey
    /// The window in which every certificate of the chain (root included) is valid; a cache
    /// hit still checks the payload's date against it.
    let validFrom: Timestamp
    let validUntil: Timestamp
    /// The `x5c[2]` texts known to parse as a certificate (Apple's libraries require one
    /// there), so a hit with another one parses it, but builds no chain.
    let parsedThirdCertificates: Locked<[String]>

    init(leafKey: PublicKey, validFrom: Timestamp, validUntil: Timestamp, thirdCertificate: String) {
        self.leafKey = leafKey
        self.validFrom = validFrom
        self.validUntil = validUntil
        parsedThirdCertificates = Locked([thirdCertificate])
    }

    /// Whether `text` is known to be a certificate; remembers a few.
    func knowsThirdCertificate(_ text: String) -> Bool {
        parsedThirdCertificates.withLock { known in known.contains { ChainKey.sameBytes($0, text) } }
    }

    func rememberThirdCertificate(_ text: String) {
        parsedThirdCertificates.withLock { known in
            if known.count >= 4 { known.removeFirst() }
            known.append(text)
        }
    }

    /// As OpenSSL judges it (`X509_cmp_time` counts a time equal to `notAfter` as past it):
    /// valid from `notBefore` up to, not including, the second of `notAfter`.
    func isValid(at time: Timestamp) -> Bool {
        let seconds = Timestamp(seconds: time.seconds)
        return validFrom <= seconds && seconds < validUntil
    }
}

/// The `x5c` texts of one chain (leaf and intermediate), compared and hashed as UTF-8 bytes.
///
/// Not as `String`s: Swift compares strings by canonical equivalence, so a text spelled with
/// other code points (a KELVIN SIGN for a `K`) would equal Apple's and hit the cache. A hit
/// must mean byte-identical certificates.
struct ChainKey: Hashable, Sendable {
    let texts: [String]

    static func == (lhs: ChainKey, rhs: ChainKey) -> Bool {
        lhs.texts.count == rhs.texts.count && zip(lhs.texts, rhs.texts).allSatisfy { sameBytes($0, $1) }
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(texts.count)
        for text in texts {
            var text = text
            text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
            hasher.combine(text.utf8.count)
        }
    }

    static func sameBytes(_ lhs: String, _ rhs: String) -> Bool {
        var lhs = lhs, rhs = rhs
        guard lhs.utf8.count == rhs.utf8.count else { return false }
        return lhs.withUTF8 { left in
            rhs.withUTF8 { right in
                left.isEmpty || memcmp(left.baseAddress!, right.baseAddress!, left.count) == 0
            }
        }
    }
}

/// A bounded least-recently-used map from `x5c[0]` and `x5c[1]` to a verified chain.
///
/// Keyed by the exact base64 bytes: decoding is strict, so equal text means equal bytes, and a
/// hit needs no decoding at all. Swift's seeded hashing keeps hostile keys from colliding.
/// Thread-safe through `Locked`; only successful verifications are ever stored.
///
/// Apple signs with one leaf for months, so nearly every lookup is for the chain used last:
/// that one is compared first (about 2.5 KB of `memcmp`) before hashing the texts.
final class ChainCache: Sendable {
    private struct State {
        var entries: [ChainKey: (entry: VerifiedChainEntry, lastUse: UInt64)] = [:]
        /// The entry used last; its `lastUse` in `entries` is written back when another
        /// entry takes its place, so eviction order is unchanged.
        var recent: (key: ChainKey, entry: VerifiedChainEntry)?
        var tick: UInt64 = 0

        mutating func makeRecent(_ key: ChainKey, _ entry: VerifiedChainEntry) {
            tick += 1
            if let previous = recent, previous.key != key {
                entries[previous.key]?.lastUse = tick - 1
            }
            entries[key] = (entry, tick)
            recent = (key, entry)
        }
    }

    private let capacity: Int
    private let state = Locked(State())

    init(capacity: Int) { self.capacity = max(0, capacity) }

    func entry(for texts: [String]) -> VerifiedChainEntry? {
        let key = ChainKey(texts: texts)
        return state.withLock { state in
            if let recent = state.recent, recent.key == key {
                state.tick += 1
                return recent.entry
            }
            guard let found = state.entries[key] else { return nil }
            state.makeRecent(key, found.entry)
            return found.entry
        }
    }

    func insert(_ entry: VerifiedChainEntry, for texts: [String]) {
        guard capacity > 0 else { return }
        let key = ChainKey(texts: texts)
        state.withLock { state in
            if state.entries[key] == nil, state.entries.count >= capacity {
                // The recent entry's stored lastUse may be stale, but it is the newest of all.
                let recentKey = state.recent?.key
                let oldest = state.entries.lazy.filter { $0.key != recentKey }
                    .min(by: { $0.value.lastUse < $1.value.lastUse })?.key
                    ?? recentKey
                if let oldest {
                    state.entries[oldest] = nil
                    if state.recent?.key == oldest { state.recent = nil }
                }
            }
            state.makeRecent(key, entry)
        }
    }

    var count: Int { state.withLock { $0.entries.count } }
}
