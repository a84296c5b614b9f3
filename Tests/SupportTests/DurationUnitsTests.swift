import Dispatch
import StoreRelayCore
import Testing

/// The one set of `Duration` conversions: exact where they can be, saturating where not.
@Suite struct DurationUnitsTests {
    @Test func wholeMillisecondsDropTheRemainderAndSaturate() {
        #expect(Duration.milliseconds(1500).wholeMilliseconds == 1500)
        #expect(Duration.microseconds(1999).wholeMilliseconds == 1)
        #expect(Duration.seconds(-2).wholeMilliseconds == -2000)
        #expect(Duration.seconds(Int64.max).wholeMilliseconds == .max)
        #expect(Duration.seconds(Int64.min).wholeMilliseconds == .min)
    }

    @Test func wholeNanosecondsClampAtZeroAndSaturate() {
        #expect(Duration.milliseconds(3).wholeNanoseconds == 3_000_000)
        #expect(Duration.seconds(-1).wholeNanoseconds == 0)
        #expect(Duration.seconds(Int64.max).wholeNanoseconds == .max)
        #expect(Duration.seconds(Int64.max).dispatchInterval == .never)
        #expect(Duration.milliseconds(5).dispatchInterval == .nanoseconds(5_000_000))
    }

    @Test func timestampsMoveByDurations() {
        let start = Timestamp(milliseconds: 1_000)
        #expect(start.advanced(by: .seconds(2)) == Timestamp(milliseconds: 3_000))
        #expect(start.advanced(by: .milliseconds(-500)) == Timestamp(milliseconds: 500))
        #expect(start.advanced(by: .seconds(Int64.max)) == Timestamp(milliseconds: .max))
        #expect(Timestamp(milliseconds: 4_500).duration(since: start) == .milliseconds(3_500))
        #expect(start.duration(since: Timestamp(milliseconds: 1_250)) == .milliseconds(-250))
    }

    @Test func dispatchTimesSaturate() {
        let now = DispatchTime(uptimeNanoseconds: 10)
        #expect(now.advanced(by: .nanoseconds(5)).uptimeNanoseconds == 15)
        #expect(now.advanced(by: .seconds(-3)).uptimeNanoseconds == 10)
        #expect(now.advanced(by: .seconds(Int64.max)).uptimeNanoseconds == .max)
    }
}
