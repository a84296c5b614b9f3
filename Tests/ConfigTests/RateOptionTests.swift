import Testing
@testable import StoreRelayConfig

/// `rate N/s` and `rate N/m` (SPEC "Delivery controls"), a delivery option of every kind.
@Suite struct RateOptionTests {
    func block(_ option: String) -> String {
        "destination d webhook http://h/ {\n    \(option)\n}\nroute * * * -> d\n"
    }

    @Test func perSecondAndPerMinute() throws {
        let fast = try webhook(try parsed(block("rate 50/s")), "d").delivery.rate
        #expect(fast == DeliveryRate(count: 50, period: .seconds(1)) && fast?.burst == 5 && fast?.description == "50/s")
        let slow = try webhook(try parsed(block("rate 30/m")), "d").delivery.rate
        #expect(slow == DeliveryRate(count: 30, period: .seconds(60)) && slow?.burst == 1 && slow?.description == "30/m")
        #expect(try webhook(try parsed(block("timeout 1s")), "d").delivery.rate == nil)
    }

    @Test func theReportShowsTheRateAndItsBurst() throws {
        #expect(try parsed(block("rate 50/s")).checkReport().contains("max-age 3d, rate 50/s (burst 5)"))
        #expect(try parsed(block("timeout 1s")).checkReport().contains("max-age 3d, rate unlimited"))
    }

    @Test func malformedRates() {
        expectError(block("rate 10"), .invalidValue, line: 2, column: 10, containing: "expected N/s or N/m")
        expectError(block("rate 10/h"), .invalidValue, line: 2, column: 10, containing: "'h' is not a unit of a rate")
        expectError(block("rate 0/s"), .invalidValue, line: 2, column: 10, containing: "out of range")
        expectError(block("rate x/s"), .invalidValue, line: 2, column: 10, containing: "not a whole number")
        expectError(block("rate"), .missingArgument, line: 2, column: 9, containing: "rate N/s or rate N/m")
        expectError(block("rate 1/s 2/s"), .unexpectedArgument, line: 2, column: 14)
        expectError(block("rate 1/s\n    rate 2/s"), .duplicate, line: 3, column: 5, containing: "duplicate option 'rate'")
    }
}
