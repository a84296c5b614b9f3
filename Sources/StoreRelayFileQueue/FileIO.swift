#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Thin wrappers over the POSIX calls the file queue makes, each turning failure into a
/// `FileQueueError` that names the call, errno and path. No buffering: what returns is in
/// the kernel (and, after a sync, on the device). Called only on the queue's own I/O queues.
enum FileIO {
    /// Queue files are group-readable: consumers usually run as another user of the group.
    static let fileMode: mode_t = 0o640
    static let directoryMode: mode_t = 0o750

    static func openFile(_ path: String, _ flags: Int32, mode: mode_t = fileMode) throws(FileQueueError) -> Int32 {
        while true {
            let fd = open(path, flags | O_CLOEXEC, mode)
            if fd >= 0 { return fd }
            if errno != EINTR { throw .system("open", path: path) }
        }
    }

    /// Writes all of `bytes` at `offset`, looping over short writes; a short write followed
    /// by an error (ENOSPC half way) throws, and the caller truncates.
    static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int, path: String) throws(FileQueueError) {
        var done = 0
        while done < bytes.count {
            let n = pwrite(fd, bytes.baseAddress! + done, bytes.count - done, off_t(offset + done))
            if n > 0 { done += n; continue }
            if n < 0 && errno == EINTR { continue }
            throw .system("write", path: path, errno: n == 0 ? EIO : errno)
        }
    }

    /// Reads up to `count` bytes at `offset`; fewer only at end of file.
    static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int, path: String) throws(FileQueueError) -> Int {
        var done = 0
        while done < buffer.count {
            let n = pread(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset + done))
            if n > 0 { done += n; continue }
            if n == 0 { break }
            if errno == EINTR { continue }
            throw .system("read", path: path)
        }
        return done
    }

    /// Makes written data durable: `fdatasync` on Linux (the size change that appending
    /// implies is flushed too), `fsync` elsewhere. Used once per batch.
    static func syncData(_ fd: Int32, path: String) throws(FileQueueError) {
        #if os(Linux)
        let rc = fdatasync(fd)
        #else
        let rc = fsync(fd)
        #endif
        if rc != 0 { throw .system("fdatasync", path: path) }
    }

    /// Makes data and metadata durable, before a file is published under its closed name.
    static func syncFile(_ fd: Int32, path: String) throws(FileQueueError) {
        if fsync(fd) != 0 { throw .system("fsync", path: path) }
    }

    /// Makes a directory entry (a created, renamed or removed file) durable.
    static func syncDirectory(_ path: String) throws(FileQueueError) {
        let fd = try openFile(path, O_RDONLY | O_DIRECTORY)
        defer { close(fd) }
        if fsync(fd) != 0 { throw .system("fsync", path: path) }
    }

    static func truncate(_ fd: Int32, to length: Int, path: String) throws(FileQueueError) {
        if ftruncate(fd, off_t(length)) != 0 { throw .system("ftruncate", path: path) }
    }

    /// `fstat` of an open file: its size, and whether it is a regular file (a device such as
    /// /dev/full behind a symlink is not).
    static func status(_ fd: Int32, path: String) throws(FileQueueError) -> (size: Int, isRegular: Bool) {
        var info = stat()
        if fstat(fd, &info) != 0 { throw .system("fstat", path: path) }
        return (Int(info.st_size), (info.st_mode & S_IFMT) == S_IFREG)
    }

    /// Whether `path` itself (not what a symlink points to) is a regular file.
    static func isRegularFile(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
    }

    static func renameFile(_ from: String, _ to: String) throws(FileQueueError) {
        if rename(from, to) != 0 { throw .system("rename", path: from) }
    }

    /// Removes a file; one that is already gone is not an error (a consumer may take it).
    static func removeFile(_ path: String) throws(FileQueueError) {
        if unlink(path) != 0 && errno != ENOENT { throw .system("unlink", path: path) }
    }

    /// Writes a small file durably under `path` through `path.tmp` and a rename; the caller
    /// syncs the directory.
    static func replaceFile(_ path: String, _ bytes: [UInt8]) throws(FileQueueError) {
        let temporary = path + ".tmp"
        let fd = try openFile(temporary, O_WRONLY | O_CREAT | O_TRUNC)
        defer { close(fd) }
        try bytes.withBytes { (raw) throws(FileQueueError) in try writeAll(fd, raw, at: 0, path: temporary) }
        try syncFile(fd, path: temporary)
        try renameFile(temporary, path)
    }

    static func createDirectory(_ path: String) throws(FileQueueError) {
        var components: [String] = []
        for part in path.split(separator: "/", omittingEmptySubsequences: false) {
            components.append(String(part))
            let prefix = components.joined(separator: "/")
            if prefix.isEmpty { continue }
            if mkdir(prefix, directoryMode) != 0 && errno != EEXIST { throw .system("mkdir", path: prefix) }
        }
        var info = stat()
        if stat(path, &info) != 0 { throw .system("stat", path: path) }
        if (info.st_mode & S_IFMT) != S_IFDIR { throw .system("mkdir", path: path, errno: ENOTDIR) }
    }

    static func listDirectory(_ path: String) throws(FileQueueError) -> [String] {
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

extension FileIO {
    /// The whole of a small file (such as `.sequence`).
    static func readSmallFile(_ path: String) throws(FileQueueError) -> [UInt8] {
        let fd = try openFile(path, O_RDONLY)
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 4096)
        let count = try bytes.withMutableBytes { (raw) throws(FileQueueError) in try read(fd, into: raw, at: 0, path: path) }
        return Array(bytes[0..<count])
    }
}
