import Foundation
import StoreRelayCore

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

/// `pollUntil` for a condition that awaits (the admin backend's and the cluster's reads):
/// suspends between checks instead of sleeping a thread.
@discardableResult
public func pollUntil(timeout: Double, interval: Double = 0.02, asking condition: () async -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if await condition() { return true }
        try? await Task.sleep(for: .milliseconds(Int(interval * 1000)))
    }
    return await condition()
}

/// The result a completion-style call gives, waited for on this thread (tests may wait;
/// the call must not need this thread to finish).
public func waitForCompletion<T: Sendable, Failure: Error>(
    _ call: (@escaping @Sendable (Result<T, Failure>) -> Void) -> Void
) throws(Failure) -> T {
    let outcome = Locked<Result<T, Failure>?>(nil)
    let done = DispatchSemaphore(value: 0)
    call { result in
        outcome.withLock { $0 = result }
        done.signal()
    }
    done.wait()
    return try outcome.current!.get()
}
