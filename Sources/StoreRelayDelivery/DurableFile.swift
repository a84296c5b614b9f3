import Foundation
import StoreRelayCore

/// Whole-file writes that are either entirely on disk or not at all.
enum DurableFile {
    struct WriteError: Error, CustomStringConvertible {
        let description: String
    }

    /// Dead letters are group-readable, like the file queue; failures read "cannot sync …".
    enum Policy: FileIOPolicy {
        static let fileMode: mode_t = 0o640
        static let directoryMode: mode_t = 0o750

        static func failure(_ call: SystemCallFailure) -> WriteError {
            let verbs = ["open": "create", "fsync": "sync"]
            return WriteError(description: "cannot \(verbs[call.operation] ?? call.operation) \(call.path): \(call.reason)")
        }
    }

    typealias FileIO = POSIXFileIO<Policy>

    /// Writes `bytes` to `path` atomically and durably: a temporary file in the same
    /// directory, fsync, rename over `path`, fsync of the directory. A temporary file that
    /// could not be finished is removed.
    static func write(_ bytes: [UInt8], to path: String) throws {
        let temporary = path + ".tmp"
        let fd = try FileIO.openFile(temporary, O_WRONLY | O_CREAT | O_TRUNC)
        do {
            defer { close(fd) }
            try FileIO.writeAll(fd, bytes, at: 0, path: temporary)
            try FileIO.syncFile(fd, path: temporary)
        } catch {
            unlink(temporary)
            throw error
        }
        do {
            try FileIO.renameFile(temporary, path)
        } catch {
            unlink(temporary)
            throw error
        }
        syncDirectory((path as NSString).deletingLastPathComponent)
    }

    /// Makes a rename or unlink in `directory` durable; best effort.
    static func syncDirectory(_ directory: String) {
        try? FileIO.syncDirectory(directory.isEmpty ? "." : directory)
    }
}
