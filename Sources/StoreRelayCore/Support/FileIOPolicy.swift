#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What differs between the modules that use `POSIXFileIO`: the permissions of what they
/// create, and the error type a failed system call becomes.
public protocol FileIOPolicy {
    associatedtype Failure: Error
    /// Mode of files created by `openFile` (when `O_CREAT` is given) and `writeFile`.
    static var fileMode: mode_t { get }
    /// Mode of each directory `createDirectory` makes.
    static var directoryMode: mode_t { get }
    /// The module's error for a failed call.
    static func failure(_ call: SystemCallFailure) -> Failure
}
