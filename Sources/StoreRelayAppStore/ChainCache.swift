import StoreRelayCrypto
import StoreRelaySupport

/// What a verified `x5c` chain proved, kept so the next JWS with the same chain costs one
/// ES256 verification instead of a chain build and two more signature checks.
struct VerifiedChainEntry: Sendable {
    /// The leaf's key, which signs the JWS.
    let leafKey: PublicKey
    /// The window in which every certificate of the chain (root included) is valid; a cache
    /// hit still checks the payload's date against it.
    let validFrom: Timestamp
    let validUntil: Timestamp

    func isValid(at time: Timestamp) -> Bool {
        let seconds = Timestamp(seconds: time.seconds)
        return validFrom <= seconds && seconds <= validUntil
    }
}

/// A bounded least-recently-used map from the `x5c` certificate texts to a verified chain.
///
/// Keyed by the exact base64 texts: decoding is strict, so equal text means equal bytes, and a
/// hit needs no decoding at all. Swift's seeded hashing keeps hostile keys from colliding.
/// Thread-safe through `Locked`; only successful verifications are ever stored.
final class ChainCache: Sendable {
    private struct State {
        var entries: [[String]: (entry: VerifiedChainEntry, lastUse: UInt64)] = [:]
        var tick: UInt64 = 0
    }

    private let capacity: Int
    private let state = Locked(State())

    init(capacity: Int) { self.capacity = max(0, capacity) }

    func entry(for key: [String]) -> VerifiedChainEntry? {
        state.withLock { state in
            guard let found = state.entries[key] else { return nil }
            state.tick += 1
            state.entries[key] = (found.entry, state.tick)
            return found.entry
        }
    }

    func insert(_ entry: VerifiedChainEntry, for key: [String]) {
        guard capacity > 0 else { return }
        state.withLock { state in
            state.tick += 1
            if state.entries[key] == nil, state.entries.count >= capacity,
               let oldest = state.entries.min(by: { $0.value.lastUse < $1.value.lastUse })?.key {
                state.entries[oldest] = nil
            }
            state.entries[key] = (entry, state.tick)
        }
    }

    var count: Int { state.withLock { $0.entries.count } }
}
