/// `withUnsafeBytes` is `rethrows`, which erases a typed error to `any Error`; these keep the
/// closure's error type by passing the outcome through a `Result`.
extension Array where Element == UInt8 {
    public func withBytes<R, Failure: Error>(
        _ body: (UnsafeRawBufferPointer) throws(Failure) -> R
    ) throws(Failure) -> R {
        try withUnsafeBytes { raw in Result { () throws(Failure) in try body(raw) } }.get()
    }

    public mutating func withMutableBytes<R, Failure: Error>(
        _ body: (UnsafeMutableRawBufferPointer) throws(Failure) -> R
    ) throws(Failure) -> R {
        try withUnsafeMutableBytes { raw in Result { () throws(Failure) in try body(raw) } }.get()
    }
}
