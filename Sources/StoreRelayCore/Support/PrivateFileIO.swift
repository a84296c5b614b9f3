#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `POSIXFileIO` for the data directory's small files outside the journal and the queues (the
/// admin token, the admin sessions, the configuration a command reads): what is created is
/// private to the gateway's user, and a failure stays a `SystemCallFailure` (one sentence
/// naming the call, the file and errno).
public enum PrivateFileIO: FileIOPolicy {
    public static let fileMode: mode_t = 0o600
    public static let directoryMode: mode_t = 0o700

    public static func failure(_ call: SystemCallFailure) -> SystemCallFailure { call }
}

public typealias PrivateFiles = POSIXFileIO<PrivateFileIO>

extension SystemCallFailure: Error {}

extension POSIXFileIO {
    /// Whether anything (file, directory, link) is at `path`.
    public static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    /// The size of the regular file at `path`, or nil when there is none (or it is not one).
    public static func fileSize(_ path: String) -> Int? {
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Int(info.st_size)
    }

    /// Writes `bytes` to `path` atomically and durably: a temporary file beside it created
    /// with `Policy.fileMode` (so never readable by others, not even briefly), fsynced, renamed
    /// over `path`, then the directory synced so the rename survives a crash.
    public static func replaceFileDurably(_ path: String, _ bytes: [UInt8]) throws(Failure) {
        let temporary = path + ".tmp"
        do {
            try writeFile(temporary, bytes)
            try renameFile(temporary, path)
        } catch {
            try? removeFile(temporary)
            throw error
        }
        let slash = path.lastIndex(of: "/")
        try syncDirectory(slash.map { String(path[..<$0]) }.map { $0.isEmpty ? "/" : $0 } ?? ".")
    }
}
