import StoreRelayCluster
import Testing

/// `ClusterSeal` without a server: what opens, what does not, and why (issue 26, point 1).
@Suite struct ClusterSealTests {
    static let key = String(repeating: "k", count: 32)
    static let previous = String(repeating: "p", count: 32)
    let record = Array(#"{"id":"evt-1","type":"DID_RENEW"}"#.utf8)

    @Test func aSealedRecordOpensOnlyAsWhatAndWhereItWasWritten() {
        let seal = ClusterSeal(keys: [Self.key])
        let sealed = seal.seal(record, .event, "evt-1")
        #expect(sealed.starts(with: Array("sr1.".utf8)) && sealed.count == record.count + 69)
        #expect(seal.open(sealed, .event, "evt-1") == .intact(record))
        // Moved: under another id, another kind, another hash field.
        #expect(seal.open(sealed, .event, "evt-2") == .forged)
        #expect(seal.open(sealed, .letter, "evt-1") == .forged)
        let state = seal.seal(record, .state, "evt-1", "billing")
        #expect(seal.open(state, .state, "evt-1", "crm") == .forged)
        #expect(seal.open(state, .state, "evt-1billing") == .forged, "names are length-prefixed, not joined")
        // Changed: one byte of the record, or of the seal.
        var changed = sealed
        changed[changed.count - 3] ^= 1
        #expect(seal.open(changed, .event, "evt-1") == .forged)
        var badSeal = sealed
        badSeal[4] = badSeal[4] == UInt8(ascii: "0") ? UInt8(ascii: "1") : UInt8(ascii: "0")
        #expect(seal.open(badSeal, .event, "evt-1") == .forged)
        // Another key's seal, and none at all.
        #expect(ClusterSeal(keys: [Self.previous]).open(sealed, .event, "evt-1") == .forged)
        #expect(seal.open(record, .event, "evt-1") == .unsealed)
        #expect(seal.open(Array("sr1.zz".utf8) + record, .event, "evt-1") == .unsealed)
    }

    @Test func rotationAndTurningTheKeyOn() {
        let old = ClusterSeal(keys: [Self.previous]).seal(record, .progress, "hook", "evt-1")
        let rotating = ClusterSeal(keys: [Self.key, Self.previous])
        #expect(rotating.open(old, .progress, "hook", "evt-1") == .intact(record), "the previous key still opens")
        #expect(ClusterSeal(keys: [Self.key]).open(rotating.seal(record, .event, "e"), .event, "e") == .intact(record),
                "the first key seals")
        // `unsealed`: records from before the key still count; forged ones still do not.
        let turningOn = ClusterSeal(keys: [Self.key], acceptsUnsealed: true)
        #expect(turningOn.open(record, .event, "evt-1") == .intact(record))
        #expect(turningOn.open(old, .progress, "hook", "evt-1") == .forged)
        // No key: nothing sealed, a sealed record read without its seal.
        #expect(ClusterSeal.off.seal(record, .event, "evt-1") == record)
        #expect(ClusterSeal.off.open(old, .progress, "x") == .intact(record))
        #expect(!ClusterSeal.off.isOn && rotating.isOn)
    }

    /// The rotation README gives, done as a rolling restart: `OLD NEW` everywhere (seal with
    /// OLD, accept NEW), then `NEW OLD`, then `NEW`. At every moment instances are at most one
    /// step apart, and each opens what any of them seals. (Going straight to `NEW OLD`, an
    /// instance still on `OLD` alone cannot open what one already on `NEW OLD` seals.)
    @Test func aRollingRotationInThreeStepsNeverLeavesARecordUnopened() {
        let (old, new) = (Self.previous, Self.key)
        let steps = [[old], [old, new], [new, old], [new]].map { ClusterSeal(keys: $0) }
        for index in 0..<(steps.count - 1) {
            for (writer, reader) in [(steps[index], steps[index + 1]), (steps[index + 1], steps[index])] {
                #expect(reader.open(writer.seal(record, .event, "evt-1"), .event, "evt-1") == .intact(record), "step \(index)")
            }
        }
        #expect(steps[0].open(ClusterSeal(keys: [new, old]).seal(record, .event, "evt-1"), .event, "evt-1") == .forged,
                "two steps apart: the two-step rotation's gap")
    }
}
