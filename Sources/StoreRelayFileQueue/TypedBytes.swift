/// `withUnsafeBytes` is `rethrows`, which erases a typed error to `any Error`; these keep
/// `FileQueueError` by passing the outcome through a `Result`.
extension Array where Element == UInt8 {
    func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws(FileQueueError) -> R) throws(FileQueueError) -> R {
        try withUnsafeBytes { raw in Result { () throws(FileQueueError) in try body(raw) } }.get()
    }

    mutating func withMutableBytes<R>(_ body: (UnsafeMutableRawBufferPointer) throws(FileQueueError) -> R) throws(FileQueueError) -> R {
        try withUnsafeMutableBytes { raw in Result { () throws(FileQueueError) in try body(raw) } }.get()
    }
}
