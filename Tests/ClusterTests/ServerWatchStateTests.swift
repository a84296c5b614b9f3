@testable import StoreRelayCluster
import Testing

/// The watch's rules without a server or a clock: silence is a probe unanswered for the
/// limit (or no connection), each change is reported once, a late answer to an old probe
/// hides nothing.
@Suite struct ServerWatchStateTests {
    let ms: UInt64 = 1_000_000

    /// The state behind a reference, so `#expect` (whose expression is a closure) may call
    /// its mutating methods.
    final class Probed {
        var state: ServerWatchState
        init(silenceLimit: UInt64, verdictLimit: UInt64 = .max) {
            state = ServerWatchState(silenceLimit: silenceLimit, verdictLimit: verdictLimit)
        }
    }

    @Test func silenceIsAProbeUnansweredForTheLimit() throws {
        let watch = Probed(silenceLimit: 700 * ms)
        #expect(watch.state.isSilent(at: 0), "not connected yet")
        watch.state.connected()
        #expect(!watch.state.isSilent(at: 10 * ms))
        let sent = watch.state.probeToSend(at: 100 * ms)
        let probe = try #require(sent)
        let second = watch.state.probeToSend(at: 300 * ms)
        #expect(second == nil, "one probe at a time")
        #expect(!watch.state.isSilent(at: 799 * ms))
        #expect(watch.state.isSilent(at: 800 * ms))
        watch.state.probeFinished(probe)
        #expect(!watch.state.isSilent(at: 900 * ms))
        watch.state.disconnected()
        #expect(watch.state.isSilent(at: 901 * ms))
        let unconnected = watch.state.probeToSend(at: 902 * ms)
        #expect(unconnected == nil, "nothing to probe on")
    }

    @Test func aLateAnswerToAnOldProbeHidesNothing() throws {
        let watch = Probed(silenceLimit: 700 * ms)
        watch.state.connected()
        let sent = watch.state.probeToSend(at: 0)
        let old = try #require(sent)
        watch.state.disconnected()
        watch.state.connected()
        let new = watch.state.probeToSend(at: 1_000 * ms)
        #expect(new != nil)
        watch.state.probeFinished(old)
        #expect(watch.state.isSilent(at: 1_700 * ms), "the new probe is still unanswered")
    }

    @Test func eachChangeOfSilenceIsReportedOnce() throws {
        let watch = Probed(silenceLimit: 700 * ms)
        #expect(watch.state.silenceChange(at: 0) == nil, "silent before the first connection is the start, not news")
        watch.state.connected()
        #expect(watch.state.silenceChange(at: 1 * ms) == nil, "the first answer is not news either")
        let sent = watch.state.probeToSend(at: 10 * ms)
        let probe = try #require(sent)
        #expect(watch.state.silenceChange(at: 500 * ms) == nil)
        #expect(watch.state.silenceChange(at: 710 * ms) == .silent)
        #expect(watch.state.silenceChange(at: 900 * ms) == nil, "once")
        watch.state.probeFinished(probe)
        #expect(watch.state.silenceChange(at: 950 * ms) == .answering)
        #expect(watch.state.silenceChange(at: 960 * ms) == nil)
    }

    @Test func eachChangeOfDurabilityIsReportedOnce() {
        let watch = Probed(silenceLimit: 700 * ms)
        #expect(watch.state.durabilityChecked(nil, at: 0) == nil)
        #expect(watch.state.durabilityChecked("appendfsync everysec", at: 0) == .notDurable("appendfsync everysec"))
        #expect(watch.state.durabilityRefusal == "appendfsync everysec")
        #expect(watch.state.durabilityChecked("appendfsync everysec", at: 0) == nil, "once")
        #expect(watch.state.durabilityChecked("maxmemory-policy allkeys-lru", at: 0) == .notDurable("maxmemory-policy allkeys-lru"))
        #expect(watch.state.durabilityChecked(nil, at: 0) == .durable)
        #expect(watch.state.durabilityRefusal == nil)
    }

    /// A verdict vouches for the server only while it is recent: none yet, or none for the
    /// limit (the watch cannot connect, its CONFIG GET fails), and nothing is acknowledged.
    @Test func aVerdictVouchesOnlyWhileItIsRecent() {
        let watch = Probed(silenceLimit: 700 * ms, verdictLimit: 6_000 * ms)
        #expect(watch.state.acceptanceRefusal(at: 0)?.contains("not been checked yet") == true)
        _ = watch.state.durabilityChecked(nil, at: 1_000 * ms)
        #expect(watch.state.acceptanceRefusal(at: 1_000 * ms) == nil)
        #expect(watch.state.acceptanceRefusal(at: 7_000 * ms) == nil)
        #expect(watch.state.acceptanceRefusal(at: 7_001 * ms)?.contains("not been checked for 6 s") == true)
        // A refusal counts however old; a verdict that passes makes the server good again.
        _ = watch.state.durabilityChecked("appendfsync no", at: 8_000 * ms)
        #expect(watch.state.acceptanceRefusal(at: 8_001 * ms) == "appendfsync no")
        #expect(watch.state.acceptanceRefusal(at: 60_000 * ms) == "appendfsync no")
        _ = watch.state.durabilityChecked(nil, at: 61_000 * ms)
        #expect(watch.state.acceptanceRefusal(at: 62_000 * ms) == nil)
    }
}
