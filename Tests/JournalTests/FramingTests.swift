import Testing
@testable import StoreRelayStorage

/// The byte layout and the pure scanner, without files.
@Suite struct FramingTests {
    struct Sample { var id: String; var body: [UInt8] }
    let samples = [
        Sample(id: "3f1c2a9e-0000-4000-8000-000000000001", body: Array("{\"a\":1}".utf8)),
        Sample(id: "é-unicode-id", body: []),
        Sample(id: "x", body: (0..<300).map { UInt8($0 % 256) }),
    ]

    func segment(_ samples: [Sample], sequence: UInt64 = 7) -> (bytes: [UInt8], ends: [Int]) {
        var bytes = RecordFrame.segmentHeader(sequence: sequence)
        var ends: [Int] = []
        for (index, sample) in samples.enumerated() {
            RecordFrame.encode(kind: 1, firstSeen: Int64(1000 + index), id: Array(sample.id.utf8), body: sample.body, into: &bytes)
            ends.append(bytes.count)
        }
        return (bytes, ends)
    }

    @Test func roundTrip() {
        let (bytes, ends) = segment(samples)
        let scan = SegmentScanner.scan(bytes, sequence: 7, maxPayloadBytes: 1 << 20)
        #expect(scan.headerProblem == nil)
        #expect(scan.damages.isEmpty)
        #expect(scan.goodLength == bytes.count)
        #expect(scan.records.map(\.id) == samples.map(\.id))
        #expect(scan.records.map(\.body) == samples.map(\.body))
        #expect(scan.records.map(\.firstSeen) == [1000, 1001, 1002])
        #expect(scan.records.map { $0.offset + $0.length } == ends)
        #expect(scan.records.allSatisfy { $0.kind == JournalRecordKind.event.rawValue })
    }

    @Test func frameIsLengthChecksumPayload() throws {
        let (bytes, _) = segment([samples[0]])
        let frame = Array(bytes[RecordFrame.segmentHeaderSize...])
        let length = Int(frame[0]) | Int(frame[1]) << 8 | Int(frame[2]) << 16 | Int(frame[3]) << 24
        #expect(length == frame.count - 8)
        let crc = UInt32(frame[4]) | UInt32(frame[5]) << 8 | UInt32(frame[6]) << 16 | UInt32(frame[7]) << 24
        let expected = Array(frame[8...]).withUnsafeBytes { RecordFrame.checksum($0) }
        #expect(crc == expected)
        #expect(Array(bytes[0..<4]) == Array("SRJL".utf8))
    }

    /// Cutting the segment at every offset (a crash at any byte of the last batch) keeps
    /// exactly the whole records before the cut and reports the rest as one torn tail.
    @Test func everyTruncationKeepsTheWholeRecordsBeforeIt() {
        let (bytes, ends) = segment(samples)
        for cut in RecordFrame.segmentHeaderSize...bytes.count {
            let scan = SegmentScanner.scan(Array(bytes[0..<cut]), sequence: 7, maxPayloadBytes: 1 << 20)
            let whole = ends.filter { $0 <= cut }
            #expect(scan.records.count == whole.count, "cut at \(cut)")
            #expect(scan.goodLength == (whole.last ?? RecordFrame.segmentHeaderSize), "cut at \(cut)")
            #expect(scan.damages.count == (ends.contains(cut) || cut == RecordFrame.segmentHeaderSize ? 0 : 1), "cut at \(cut)")
            #expect(scan.salvaged.isEmpty, "cut at \(cut)")
        }
    }

    @Test func damageInTheMiddleIsFollowedByResynchronization() {
        var (bytes, ends) = segment(samples + [Sample(id: "last", body: [1, 2, 3])])
        let second = ends[0]
        bytes[second + 12] ^= 0xFF
        let scan = SegmentScanner.scan(bytes, sequence: 7, maxPayloadBytes: 1 << 20)
        #expect(scan.records.map(\.id) == [samples[0].id])
        #expect(scan.goodLength == second)
        #expect(scan.damages == [.init(offset: second, problem: .badChecksum, resumeAt: ends[1])])
        #expect(scan.salvaged.map(\.id) == [samples[2].id, "last"])
    }

    @Test func headerProblems() {
        let (bytes, _) = segment(samples)
        #expect(SegmentScanner.scan(Array(bytes[0..<10]), sequence: 7, maxPayloadBytes: 1024).headerProblem == .short)
        #expect(SegmentScanner.scan(bytes, sequence: 8, maxPayloadBytes: 1024).headerProblem == .wrongSequence(7))
        var bad = bytes
        bad[0] = 0
        #expect(SegmentScanner.scan(bad, sequence: 7, maxPayloadBytes: 1024).headerProblem == .badMagic)
    }

    @Test func lengthBeyondTheLimitIsDamage() {
        let big = Sample(id: "big", body: Array(repeating: 7, count: 3000))
        let (bytes, ends) = segment([samples[0], samples[1], big])
        let scan = SegmentScanner.scan(bytes, sequence: 7, maxPayloadBytes: 1000)
        #expect(scan.records.count == 2)
        #expect(scan.damages.first?.offset == ends[1])
        #expect(scan.damages.first?.problem == .badLength)
    }

    @Test func snapshotChunksRoundTripAndStopAtDamage() throws {
        // Chunks are written sorted by digest (`RetiredIDIndex` searches them): "é" sorts first.
        let first: [DedupeSnapshot.Entry] = [(EventIDDigest("é"), -5), (EventIDDigest("a"), 1)]
        #expect(first[0].digest < first[1].digest)
        let second: [DedupeSnapshot.Entry] = [(EventIDDigest(String(repeating: "z", count: 300)), 1 << 40)]
        let bytes = DedupeSnapshot.header() + DedupeSnapshot.chunk(first) + DedupeSnapshot.chunk(second)
        let contents = try #require(DedupeSnapshot.decode(bytes))
        #expect(contents.entries.map(\.digest) == (first + second).map(\.digest))
        #expect(contents.entries.map(\.firstSeen) == [-5, 1, 1 << 40])
        // Unsorted entries are sorted on the way out.
        #expect(DedupeSnapshot.chunk(first.reversed()) == DedupeSnapshot.chunk(first))
        #expect(contents.intactLength == bytes.count)
        #expect(!contents.isOldVersion)
        #expect(try #require(DedupeSnapshot.decode(DedupeSnapshot.header())).entries.isEmpty)

        // A flipped header byte: nothing can be trusted.
        for index in [0, 4] {
            var damaged = bytes
            damaged[index] ^= 0x01
            #expect(DedupeSnapshot.decode(damaged) == nil, "flip at \(index)")
        }
        // Damage in a chunk, or a chunk cut short: the chunks before it stand.
        let firstEnd = DedupeSnapshot.headerSize + DedupeSnapshot.chunk(first).count
        for index in [firstEnd, firstEnd + 5, bytes.count - 1] {
            var damaged = bytes
            damaged[index] ^= 0x01
            let kept = try #require(DedupeSnapshot.decode(damaged))
            #expect(kept.entries.count == 2, "flip at \(index)")
            #expect(kept.intactLength == firstEnd)
        }
        let cut = try #require(DedupeSnapshot.decode(Array(bytes.dropLast())))
        #expect(cut.entries.count == 2 && cut.intactLength == firstEnd)
        #expect(!cut.skippedDamage)

        // Damage with intact chunks after it is not a torn append: the reader skips it.
        var middle = DedupeSnapshot.chunk(second)
        middle[9] ^= 0x04
        let third: [DedupeSnapshot.Entry] = [(EventIDDigest("third"), 3)]
        let skipped = try #require(DedupeSnapshot.decode(DedupeSnapshot.header() + DedupeSnapshot.chunk(first) + middle
                                                         + DedupeSnapshot.chunk(third)))
        #expect(skipped.skippedDamage)
        #expect(skipped.entries.map(\.digest) == (first + third).map(\.digest))
    }

    @Test func idDigestsAreStableAndDistinct() {
        #expect(EventIDDigest("evt-1") == EventIDDigest("evt-1"))
        #expect(EventIDDigest("evt-1") != EventIDDigest("evt-2"))
        // SHA-256("abc") starts ba7816bf 8f01cfea 414140de 5dae2223: the first 16 bytes, as
        // two little-endian words.
        #expect(EventIDDigest("abc") == EventIDDigest(high: 0xEACF_018F_BF16_78BA, low: 0x2322_AE5D_DE40_4141))
    }

    @Test func segmentNames() {
        #expect(SegmentName.fileName(42) == "00000000000000000042.log")
        #expect(SegmentName.sequence(of: "00000000000000000042.log") == 42)
        #expect(SegmentName.sequence(of: "00000000000000000042.log.corrupt-16") == nil)
        #expect(SegmentName.sequence(of: "seen-ids") == nil)
        #expect(SegmentName.sequence(of: "0000000000000000004x.log") == nil)
    }
}
