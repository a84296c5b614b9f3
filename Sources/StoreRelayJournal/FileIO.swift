#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import StoreRelaySupport

/// The POSIX file calls the journal makes (see `POSIXFileIO`), failing with `JournalError`.
typealias FileIO = POSIXFileIO<JournalFileIO>

/// The journal's files are private to the gateway's user: they hold whole notifications.
enum JournalFileIO: FileIOPolicy {
    static let fileMode: mode_t = 0o600
    static let directoryMode: mode_t = 0o700

    static func failure(_ call: SystemCallFailure) -> JournalError { JournalError(call) }
}
