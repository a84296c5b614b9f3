import Testing
@testable import StoreRelayVerification
import StoreRelayCore

/// The fast ISO-8601 writer of Apple's dates must give `Timestamp.iso8601`'s text exactly.
@Suite struct AppleDatesTextTests {
    @Test func matchesTimestampAcrossTheWholeRange() {
        var values: [Int64] = [
            -62_167_219_200_000, -62_167_219_199_999, -62_135_769_600_000, -86_400_001, -86_400_000, -1001,
            -1000, -999, -1, 0, 1, 999, 1000, 86_399_999, 86_400_000, 951_782_400_000, 951_868_799_999,
            1_697_679_936_711, 4_102_444_800_000, 253_402_300_799_999,
        ]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<20_000 {
            values.append(Int64.random(in: -62_167_219_200_000...253_402_300_799_999, using: &generator))
        }
        for value in values {
            #expect(AppleDates.iso8601Text(milliseconds: value) == Timestamp(milliseconds: value).iso8601, "\(value)")
        }
    }
}
