import StoreRelayStorage
import StoreRelayCore

/// Why delivery could not open or write what it owns: a destination (its file queue), the
/// dead-letter store, the records of bulk replays, the checkpoint. One shape for the module,
/// as `StorageError` is for storage; what it wraps stays reachable for the operator.
///
/// Compare on `code`; the backing enum is private so codes can be added without breaking
/// callers that compare with the public ones.
public struct DeliveryError: Error, Sendable, CustomStringConvertible {
    /// The kind of failure. Compare with `==`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        fileprivate enum Backing: Hashable, Sendable {
            case io, destination
        }
        fileprivate let backing: Backing

        /// A system call on delivery's own files failed (dead letters, replay records, the
        /// checkpoint); `operation`, `errno` and `path` say which.
        public static let io = Code(backing: .io)
        /// A destination could not be opened (a file queue's directory); `destination` names
        /// it and `storage` says why.
        public static let destination = Code(backing: .destination)

        public var description: String { "\(backing)" }
    }

    public let code: Code
    /// The destination concerned, for `.destination`.
    public let destination: String?
    /// The storage layer's error behind a `.destination` failure.
    public let storage: StorageError?
    /// The failed system call, when there was one.
    public let operation: String?
    /// `errno` from that call.
    public let errno: Int32?
    /// The file or directory concerned.
    public let path: String?
    /// One sentence for humans and logs.
    public let message: String

    /// A failed system call on delivery's own files, as `.io`.
    init(_ call: SystemCallFailure) {
        self.init(.io, destination: nil, storage: nil, operation: call.operation, errno: call.errno, path: call.path,
                  message: call.description)
    }

    /// Destination `name` could not be opened because of `error`, as `.destination`.
    init(destination name: String, _ error: StorageError) {
        self.init(.destination, destination: name, storage: error, operation: error.operation, errno: error.errno,
                  path: error.path, message: error.message)
    }

    private init(_ code: Code, destination: String?, storage: StorageError?, operation: String?, errno: Int32?, path: String?,
                 message: String) {
        self.code = code
        self.destination = destination
        self.storage = storage
        self.operation = operation
        self.errno = errno
        self.path = path
        self.message = message
    }

    public var description: String { message }
}
