#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import StoreRelaySupport

/// The POSIX file calls the file queue makes (see `POSIXFileIO`), failing with
/// `FileQueueError`. Called only on the queue's own I/O queues.
typealias FileIO = POSIXFileIO<FileQueueFileIO>

/// Queue files are group-readable: consumers usually run as another user of the group.
enum FileQueueFileIO: FileIOPolicy {
    static let fileMode: mode_t = 0o640
    static let directoryMode: mode_t = 0o750

    static func failure(_ call: SystemCallFailure) -> FileQueueError { FileQueueError(call) }
}
