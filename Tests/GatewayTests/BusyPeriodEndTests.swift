import Testing
@testable import StoreRelayGateway

@Suite struct BusyPeriodEndTests {
    /// Memory is trimmed once when a burst drains: not while idle, not while busy.
    @Test func firesOncePerBusyPeriod() {
        var edge = BusyPeriodEnd()
        let samples = [false, false, true, true, false, false, true, false, true, true, true, false]
        let fired = samples.enumerated().filter { edge.ended(busy: $0.element) }.map(\.offset)
        #expect(fired == [4, 7, 11])
    }
}
