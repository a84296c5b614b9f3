#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Reads from a child's pipe that survive signals. Foundation's `readDataToEndOfFile`,
/// `availableData` and `readData(ofLength:)` end in a `try!` on Linux, so a read interrupted
/// by a signal (EINTR: SIGCHLD from another test's child exiting, say) crashed the whole test
/// process. These read with POSIX `read` and try again when interrupted.
extension FileHandle {
    /// What one `read` gives (at most `limit` bytes; empty at end of file or on an error).
    public func readSome(limit: Int = 65_536) -> Data {
        var buffer = [UInt8](repeating: 0, count: limit)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fileDescriptor, $0.baseAddress, $0.count) }
            if count >= 0 { return Data(buffer[0..<count]) }
            if errno != EINTR { return Data() }
        }
    }

    /// Everything up to end of file, blocking.
    public func readToEndRetryingInterrupts() -> Data {
        var data = Data()
        while true {
            let chunk = readSome()
            if chunk.isEmpty { return data }
            data.append(chunk)
        }
    }
}
