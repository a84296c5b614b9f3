import StoreRelaySupport

/// Why a journal operation failed, with the context an operator needs: the system call, its
/// errno and the file it was about.
///
/// Compare on `code`; the backing enum is private so new codes can be added without breaking
/// callers that switch over the public ones.
public struct JournalError: Error, Sendable, CustomStringConvertible {
    /// The kind of failure. Compare with `==`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        fileprivate enum Backing: Hashable, Sendable {
            case io, closed, invalidID, recordTooLarge, corruptSegment, inUse
        }
        fileprivate let backing: Backing

        /// A system call on a journal file failed (write, fdatasync, open, rename...).
        public static let io = Code(backing: .io)
        /// The journal was closed; nothing more is accepted.
        public static let closed = Code(backing: .closed)
        /// The event id is empty or longer than `RecordFrame.maxIDBytes` bytes of UTF-8.
        public static let invalidID = Code(backing: .invalidID)
        /// The payload is larger than `JournalOptions.maxPayloadBytes`.
        public static let recordTooLarge = Code(backing: .recordTooLarge)
        /// Damage that recovery could not repair in place.
        public static let corruptSegment = Code(backing: .corruptSegment)
        /// Another open journal (another process) holds the directory's lock.
        public static let inUse = Code(backing: .inUse)

        public var description: String { "\(backing)" }
    }

    public let code: Code
    /// The failed system call (`write`, `fdatasync`, `open`...), when there was one.
    public let operation: String?
    /// `errno` from that call.
    public let errno: Int32?
    /// The file or directory concerned.
    public let path: String?
    /// One sentence for humans and logs.
    public let message: String

    init(_ code: Code, operation: String? = nil, errno: Int32? = nil, path: String? = nil, message: String) {
        self.code = code
        self.operation = operation
        self.errno = errno
        self.path = path
        self.message = message
    }

    /// A failed system call, as `.io`.
    init(_ call: SystemCallFailure) {
        self.init(.io, operation: call.operation, errno: call.errno, path: call.path, message: call.description)
    }

    static let closed = JournalError(.closed, message: "the journal is closed")

    public var description: String { message }
}
