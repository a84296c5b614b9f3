#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import StoreRelayCore

/// The POSIX file calls the journal makes (see `POSIXFileIO`), failing with `StorageError`.
typealias JournalFiles = POSIXFileIO<JournalFilePolicy>

/// The journal's files are private to the gateway's user: they hold whole notifications.
enum JournalFilePolicy: FileIOPolicy {
    static let fileMode: mode_t = 0o600
    static let directoryMode: mode_t = 0o700

    static func failure(_ call: SystemCallFailure) -> StorageError { StorageError(call) }
}

/// The POSIX file calls the file queue makes, failing with `StorageError`. Called only on the
/// queue's own I/O queues.
typealias QueueFiles = POSIXFileIO<QueueFilePolicy>

/// Queue files are group-readable: consumers usually run as another user of the group.
enum QueueFilePolicy: FileIOPolicy {
    static let fileMode: mode_t = 0o640
    static let directoryMode: mode_t = 0o750

    static func failure(_ call: SystemCallFailure) -> StorageError { StorageError(call) }
}
