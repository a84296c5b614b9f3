#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import StoreRelayCore
import StoreRelayCrypto

/// The last few JWS headers decoded, by the exact bytes of their base64url segment.
///
/// Apple's header is the algorithm and the three-certificate chain: ~5 KB of base64 that is
/// the same in a notification and the two JWS nested in it, and in every notification signed
/// with the same leaf for months. Comparing the bytes costs a `memcmp`; decoding and parsing
/// them again cost about ten times as much, three times per notification. The entry also
/// keeps the SHA-256 state after `header '.'`, so the signing input's digest starts there.
///
/// Only a memo of a pure function: the header is still covered by the signature and its chain
/// still checked. Thread-safe through `Locked`.
public final class JWSHeaderCache: Sendable {
    private struct Entry {
        let segment: [UInt8]
        let header: JSONObject
        let hashedThroughDot: SHA256.State
    }

    /// Most recent first.
    private let entries = Locked<[Entry]>([])
    private let capacity: Int
    /// Longer segments are decoded every time: no real header comes near, and a hostile one
    /// must not make every lookup compare megabytes.
    static let maximumSegmentBytes = 16 * 1024

    public init(capacity: Int = 4) {
        self.capacity = max(0, capacity)
    }

    /// The header decoded from `segment`, the SHA-256 state after `segment '.'`, and the
    /// remembered copy of `segment` (to share rather than copy again).
    func header(for segment: UnsafeBufferPointer<UInt8>) -> (JSONObject, SHA256.State, [UInt8])? {
        guard let base = segment.baseAddress, segment.count <= Self.maximumSegmentBytes else { return nil }
        return entries.withLock { entries in
            guard let index = entries.firstIndex(where: { entry in
                entry.segment.count == segment.count
                    && entry.segment.withUnsafeBufferPointer { memcmp($0.baseAddress!, base, segment.count) == 0 }
            }) else { return nil }
            if index > 0 { entries.insert(entries.remove(at: index), at: 0) }
            return (entries[0].header, entries[0].hashedThroughDot, entries[0].segment)
        }
    }

    func remember(_ header: JSONObject, hashedThroughDot: SHA256.State, for segment: [UInt8]) {
        guard capacity > 0, !segment.isEmpty, segment.count <= Self.maximumSegmentBytes else { return }
        let entry = Entry(segment: segment, header: header, hashedThroughDot: hashedThroughDot)
        entries.withLock { entries in
            entries.insert(entry, at: 0)
            if entries.count > capacity { entries.removeLast() }
        }
    }

    var count: Int { entries.withLock { $0.count } }
}
