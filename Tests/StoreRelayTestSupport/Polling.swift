import Foundation

/// Polls `condition` every `interval` seconds until it holds or `timeout` seconds pass, and
/// says whether it held (checked once more at the deadline): what every "wait until the
/// gateway has done it" in the tests comes down to.
@discardableResult
public func pollUntil(timeout: Double, interval: Double = 0.02, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if condition() { return true }
        Thread.sleep(forTimeInterval: interval)
    }
    return condition()
}
