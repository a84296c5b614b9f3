#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Thin wrappers over the POSIX calls the journal makes, each turning failure into a
/// `JournalError` that names the call, errno and path. No buffering: what returns is in the
/// kernel (and, after `syncData`, on the device).
enum FileIO {
    static func openFile(_ path: String, _ flags: Int32, mode: mode_t = 0o600) throws(JournalError) -> Int32 {
        while true {
            let fd = open(path, flags | O_CLOEXEC, mode)
            if fd >= 0 { return fd }
            if errno != EINTR { throw .system("open", path: path) }
        }
    }

    /// Writes all of `bytes` at `offset`, looping over short writes; a short write followed
    /// by an error (ENOSPC half way) throws, and the caller truncates.
    static func writeAll(_ fd: Int32, _ bytes: [UInt8], at offset: Int, path: String) throws(JournalError) {
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { buffer in
                pwrite(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset + done))
            }
            if n > 0 { done += n; continue }
            if n < 0 && errno == EINTR { continue }
            throw .system("write", path: path, errno: n == 0 ? EIO : errno)
        }
    }

    /// Makes written data durable: `fdatasync` on Linux (the size change that appending
    /// implies is flushed too), `fsync` elsewhere.
    static func syncData(_ fd: Int32, path: String) throws(JournalError) {
        #if os(Linux)
        let rc = fdatasync(fd)
        #else
        let rc = fsync(fd)
        #endif
        if rc != 0 { throw .system("fdatasync", path: path) }
    }

    /// Makes a directory entry (a created, renamed or removed file) durable.
    static func syncDirectory(_ path: String) throws(JournalError) {
        let fd = try openFile(path, O_RDONLY | O_DIRECTORY)
        defer { close(fd) }
        if fsync(fd) != 0 { throw .system("fsync", path: path) }
    }

    static func truncate(_ fd: Int32, to length: Int, path: String) throws(JournalError) {
        if ftruncate(fd, off_t(length)) != 0 { throw .system("ftruncate", path: path) }
    }

    static func size(_ fd: Int32, path: String) throws(JournalError) -> Int {
        var info = stat()
        if fstat(fd, &info) != 0 { throw .system("fstat", path: path) }
        return Int(info.st_size)
    }

    /// The whole file; segments are bounded by the rotation size, so one read is fine.
    static func readAll(_ path: String) throws(JournalError) -> [UInt8] {
        let fd = try openFile(path, O_RDONLY)
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: try size(fd, path: path))
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + done, $0.count - done) }
            if n > 0 { done += n; continue }
            if n < 0 && errno == EINTR { continue }
            if n == 0 { break }
            throw .system("read", path: path)
        }
        return Array(bytes[0..<done])
    }

    /// Writes a new file durably: data synced before the caller renames or relies on it.
    static func writeFile(_ path: String, _ bytes: [UInt8]) throws(JournalError) {
        let fd = try openFile(path, O_WRONLY | O_CREAT | O_TRUNC)
        defer { close(fd) }
        try writeAll(fd, bytes, at: 0, path: path)
        if fsync(fd) != 0 { throw .system("fsync", path: path) }
    }

    static func renameFile(_ from: String, _ to: String) throws(JournalError) {
        if rename(from, to) != 0 { throw .system("rename", path: from) }
    }

    /// Removes a file; one that is already gone is not an error.
    static func removeFile(_ path: String) throws(JournalError) {
        if unlink(path) != 0 && errno != ENOENT { throw .system("unlink", path: path) }
    }

    static func createDirectory(_ path: String) throws(JournalError) {
        var components: [String] = []
        for part in path.split(separator: "/", omittingEmptySubsequences: false) {
            components.append(String(part))
            let prefix = components.joined(separator: "/")
            if prefix.isEmpty { continue }
            if mkdir(prefix, 0o700) != 0 && errno != EEXIST { throw .system("mkdir", path: prefix) }
        }
    }

    static func listDirectory(_ path: String) throws(JournalError) -> [String] {
        guard let dir = opendir(path) else { throw .system("opendir", path: path) }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }
}
