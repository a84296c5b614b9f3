import Dispatch

/// A value that only code running on `queue` may touch.
///
/// The invariant behind `@unchecked Sendable`: `value` is read and written only inside
/// `access`, which asserts (with `dispatchPrecondition`) that it runs on the serial `queue`.
public final class QueueConfined<Value>: @unchecked Sendable {
    public let queue: DispatchQueue
    private var value: Value

    public init(_ value: Value, queue: DispatchQueue) {
        self.value = value
        self.queue = queue
    }

    public func access<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        dispatchPrecondition(condition: .onQueue(queue))
        return try body(&value)
    }
}
