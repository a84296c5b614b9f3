#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A failed system call: which call, the file it was about and its errno.
///
/// Modules do not throw this: their `FileIOPolicy` turns it into their own error type, so
/// callers keep comparing on their module's error codes.
public struct SystemCallFailure: Sendable, CustomStringConvertible {
    /// The call that failed (`open`, `write`, `fdatasync`, `rename`...).
    public let operation: String
    /// The file or directory concerned (for `rename`, the source).
    public let path: String
    public let errno: Int32

    /// Reads the calling thread's `errno` unless one is given.
    public init(_ operation: String, path: String, errno: Int32 = currentErrno()) {
        self.operation = operation
        self.path = path
        self.errno = errno
    }

    /// `strerror` of `errno`.
    public var reason: String { String(cString: strerror(errno)) }

    /// "write failed on /var/q/1.jsonl: No space left on device".
    public var description: String { "\(operation) failed on \(path): \(reason)" }
}

/// `errno` of the calling thread, read where a member named `errno` would shadow it.
@usableFromInline
func currentErrno() -> Int32 { errno }
