import Foundation

/// Whole-file writes that are either entirely on disk or not at all.
enum DurableFile {
    struct WriteError: Error, CustomStringConvertible {
        let description: String
    }

    /// Writes `bytes` to `path` atomically and durably: a temporary file in the same
    /// directory, fsync, rename over `path`, fsync of the directory.
    static func write(_ bytes: [UInt8], to path: String) throws {
        let temporary = path + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o640)
        guard fd >= 0 else { throw WriteError(description: "cannot create \(temporary): \(String(cString: strerror(errno)))") }
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { Foundation.write(fd, $0.baseAddress! + written, bytes.count - written) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                let reason = String(cString: strerror(errno))
                close(fd)
                unlink(temporary)
                throw WriteError(description: "cannot write \(temporary): \(reason)")
            }
            written += n
        }
        guard fsync(fd) == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            unlink(temporary)
            throw WriteError(description: "cannot sync \(temporary): \(reason)")
        }
        close(fd)
        guard rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw WriteError(description: "cannot rename \(temporary): \(reason)")
        }
        syncDirectory((path as NSString).deletingLastPathComponent)
    }

    /// Makes a rename or unlink in `directory` durable.
    static func syncDirectory(_ directory: String) {
        let fd = open(directory.isEmpty ? "." : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        fsync(fd)
        close(fd)
    }
}
