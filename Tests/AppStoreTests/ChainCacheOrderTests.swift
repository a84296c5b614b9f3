import Testing
@testable import StoreRelayVerification
import StoreRelayCore
import StoreRelayTestSupport

/// The cache itself: least-recently-used eviction (the entry used last is checked first and
/// its use time written back lazily) and byte-exact keys.
@Suite struct ChainCacheOrderTests {
    static func entry() throws -> VerifiedChainEntry {
        let key = try Certificate(pemString: Fixtures.authority.rootPEM).publicKey()
        return VerifiedChainEntry(leafKey: key, validFrom: Timestamp(milliseconds: 0), validUntil: Timestamp(milliseconds: 1),
                                  thirdCertificate: "")
    }

    @Test func evictsTheLeastRecentlyUsedEvenAfterRepeatedHitsOnTheLastOne() throws {
        let cache = ChainCache(capacity: 2)
        let entry = try Self.entry()
        cache.insert(entry, for: ["a"])
        cache.insert(entry, for: ["b"])
        for _ in 0..<3 { #expect(cache.entry(for: ["b"]) != nil) }  // the recent path
        #expect(cache.entry(for: ["a"]) != nil)  // b's last use is written back here
        cache.insert(entry, for: ["c"])  // b was used before a: b goes
        #expect(cache.entry(for: ["b"]) == nil)
        #expect(cache.entry(for: ["a"]) != nil)
        #expect(cache.entry(for: ["c"]) != nil)

        cache.insert(entry, for: ["d"])  // a was used before c: a goes
        #expect(cache.entry(for: ["a"]) == nil)
        #expect(cache.count == 2)
    }

    @Test func aOneEntryCacheReplacesItsEntry() throws {
        let cache = ChainCache(capacity: 1)
        let entry = try Self.entry()
        cache.insert(entry, for: ["a"])
        cache.insert(entry, for: ["b"])
        #expect(cache.entry(for: ["a"]) == nil)
        #expect(cache.entry(for: ["b"]) != nil)
        #expect(cache.count == 1)
    }

    @Test func keysAreComparedAsBytesNotAsCanonicallyEquivalentText() throws {
        let cache = ChainCache(capacity: 4)
        cache.insert(try Self.entry(), for: ["MIIK", "x", "y"])
        // U+212A KELVIN SIGN is canonically equivalent to "K", so the strings are equal...
        let kelvin = ["MII\u{212A}", "x", "y"]
        #expect(kelvin == ["MIIK", "x", "y"])
        // ...but they are not the same certificate text.
        #expect(cache.entry(for: kelvin) == nil)
        #expect(cache.entry(for: ["MIIK", "x", "y"]) != nil)
        #expect(cache.entry(for: ["MIIK", "x"]) == nil)
        #expect(cache.entry(for: ["MIIK", "x", "z"]) == nil)
    }
}
