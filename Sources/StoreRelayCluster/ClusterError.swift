#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import StoreRelayCore

/// Why cluster mode could not do something of its own, outside the server's replies (those
/// are `RedisError`s): today a file this instance keeps beside the server, `cluster-epoch.json`.
///
/// Compare on `code`; the backing enum is private so codes can be added without breaking
/// callers that compare with the public ones.
public struct ClusterError: Error, Sendable, CustomStringConvertible {
    /// The kind of failure. Compare with `==`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        fileprivate enum Backing: Hashable, Sendable {
            case io
        }
        fileprivate let backing: Backing

        /// A system call on this instance's cluster files failed; `operation`, `errno` and
        /// `path` say which.
        public static let io = Code(backing: .io)

        public var description: String { "\(backing)" }
    }

    public let code: Code
    /// The failed system call.
    public let operation: String?
    /// `errno` from that call.
    public let errno: Int32?
    /// The file or directory concerned.
    public let path: String?
    /// One sentence for humans and logs.
    public let message: String

    /// A failed system call, as `.io`.
    init(_ call: SystemCallFailure) {
        code = .io
        operation = call.operation
        errno = call.errno
        path = call.path
        message = call.description
    }

    public var description: String { message }
}

/// This instance's own files in the data directory (0600 in 0700), failing as `ClusterError`.
enum ClusterFilePolicy: FileIOPolicy {
    static let fileMode: mode_t = 0o600
    static let directoryMode: mode_t = 0o700
    static func failure(_ call: SystemCallFailure) -> ClusterError { ClusterError(call) }
}

typealias ClusterFiles = POSIXFileIO<ClusterFilePolicy>
