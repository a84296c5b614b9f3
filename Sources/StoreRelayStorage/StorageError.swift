import StoreRelayCore

/// Why a journal or file-queue operation failed, with what an operator needs to act: the
/// system call, its errno and the file it was about. One shape for the whole storage layer.
///
/// Compare on `code`; the backing enum is private so codes can be added without breaking
/// callers that compare with the public ones. A failed file-queue `append` means the line is
/// not delivered: the caller keeps the event and retries (the line may then appear twice,
/// never zero times).
public struct StorageError: Error, Sendable, CustomStringConvertible {
    /// The kind of failure. Compare with `==`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        fileprivate enum Backing: Hashable, Sendable {
            case io, closed, invalidID, recordTooLarge, corruptSegment, inUse, invalidLine, compression
        }
        fileprivate let backing: Backing

        /// A system call on a storage file or directory failed (open, write, fdatasync,
        /// rename...); `operation`, `errno` and `path` say which.
        public static let io = Code(backing: .io)
        /// The journal or queue was closed; nothing more is accepted.
        public static let closed = Code(backing: .closed)
        /// Journal: the event id is empty or longer than `RecordFrame.maxIDBytes` bytes of UTF-8.
        public static let invalidID = Code(backing: .invalidID)
        /// Journal: the payload is larger than `JournalOptions.maxPayloadBytes`.
        public static let recordTooLarge = Code(backing: .recordTooLarge)
        /// Journal: damage that recovery could not repair in place.
        public static let corruptSegment = Code(backing: .corruptSegment)
        /// Journal: another open journal (another process) holds the directory's lock.
        public static let inUse = Code(backing: .inUse)
        /// File queue: the line is empty or contains a newline byte, so it cannot be one JSONL line.
        public static let invalidLine = Code(backing: .invalidLine)
        /// File queue: zlib refused to set up or run a deflate stream.
        public static let compression = Code(backing: .compression)

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

    /// A store other than this module's files failed (cluster mode's event log on the server).
    public static func unavailable(_ message: String) -> StorageError { StorageError(.io, message: message) }

    static let journalClosed = StorageError(.closed, message: "the journal is closed")
    static let queueClosed = StorageError(.closed, message: "the file queue is closed")

    public var description: String { message }
}
