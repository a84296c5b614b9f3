#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Thin wrappers over the POSIX file calls, each turning failure into `Policy.Failure` that
/// names the call, errno and path. No buffering: what returns is in the kernel (and, after a
/// sync, on the device). Blocking: call them only on a dedicated serial I/O queue.
///
/// A module names its instance once, e.g. `typealias FileIO = POSIXFileIO<JournalFileIO>`.
public enum POSIXFileIO<Policy: FileIOPolicy> {
    public typealias Failure = Policy.Failure

    static func fail(_ operation: String, path: String, errno code: Int32 = currentErrno()) -> Failure {
        Policy.failure(SystemCallFailure(operation, path: path, errno: code))
    }

    /// `open` with `O_CLOEXEC`, retried on EINTR. An open for writing never follows a
    /// symbolic link (`O_NOFOLLOW`, ELOOP): a link planted where the gateway writes (a queue
    /// directory is shared with its consumers) must not make it truncate or fill another
    /// file. Reads follow links: configuration and keys are often mounted as links.
    public static func openFile(_ path: String, _ flags: Int32, mode: mode_t = Policy.fileMode) throws(Failure) -> Int32 {
        let writing = flags & (O_WRONLY | O_RDWR) != 0
        while true {
            let fd = open(path, flags | O_CLOEXEC | (writing ? O_NOFOLLOW : 0), mode)
            if fd >= 0 { return fd }
            if errno != EINTR { throw fail("open", path: path) }
        }
    }

    /// Writes all of `bytes` at `offset`, looping over short writes; a short write followed
    /// by an error (ENOSPC half way) throws, and the caller truncates.
    public static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int, path: String) throws(Failure) {
        var done = 0
        while done < bytes.count {
            let n = pwrite(fd, bytes.baseAddress! + done, bytes.count - done, off_t(offset + done))
            if n > 0 { done += n; continue }
            if n < 0 && errno == EINTR { continue }
            throw fail("write", path: path, errno: n == 0 ? EIO : errno)
        }
    }

    public static func writeAll(_ fd: Int32, _ bytes: [UInt8], at offset: Int, path: String) throws(Failure) {
        try bytes.withBytes { (raw) throws(Failure) in try writeAll(fd, raw, at: offset, path: path) }
    }

    /// Reads up to `buffer.count` bytes at `offset`; fewer only at end of file.
    public static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int, path: String) throws(Failure) -> Int {
        var done = 0
        while done < buffer.count {
            let n = pread(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset + done))
            if n > 0 { done += n; continue }
            if n == 0 { break }
            if errno == EINTR { continue }
            throw fail("read", path: path)
        }
        return done
    }

    /// Makes written data durable: `fdatasync` on Linux (the size change that appending
    /// implies is flushed too), `fsync` elsewhere.
    public static func syncData(_ fd: Int32, path: String) throws(Failure) {
        #if os(Linux)
        let rc = fdatasync(fd)
        #else
        let rc = fsync(fd)
        #endif
        if rc != 0 { throw fail("fdatasync", path: path) }
    }

    /// Makes data and metadata durable, before a file is published under its final name.
    public static func syncFile(_ fd: Int32, path: String) throws(Failure) {
        if fsync(fd) != 0 { throw fail("fsync", path: path) }
    }

    /// Makes a directory entry (a created, renamed or removed file) durable.
    public static func syncDirectory(_ path: String) throws(Failure) {
        let fd = try openFile(path, O_RDONLY | O_DIRECTORY)
        defer { close(fd) }
        if fsync(fd) != 0 { throw fail("fsync", path: path) }
    }

    public static func truncate(_ fd: Int32, to length: Int, path: String) throws(Failure) {
        if ftruncate(fd, off_t(length)) != 0 { throw fail("ftruncate", path: path) }
    }

    /// `fstat` of an open file: its size, and whether it is a regular file (a device such as
    /// /dev/full behind a symlink is not).
    public static func status(_ fd: Int32, path: String) throws(Failure) -> (size: Int, isRegular: Bool) {
        var info = stat()
        if fstat(fd, &info) != 0 { throw fail("fstat", path: path) }
        return (Int(info.st_size), (info.st_mode & S_IFMT) == S_IFREG)
    }

    /// Whether `path` itself (not what a symlink points to) is a regular file.
    public static func isRegularFile(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
    }

    public static func renameFile(_ from: String, _ to: String) throws(Failure) {
        if rename(from, to) != 0 { throw fail("rename", path: from) }
    }

    /// Removes a file; one that is already gone is not an error.
    public static func removeFile(_ path: String) throws(Failure) {
        if unlink(path) != 0 && errno != ENOENT { throw fail("unlink", path: path) }
    }
}
