#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Whole files and directories, built from the single calls in `POSIXFileIO.swift`.
extension POSIXFileIO {
    /// The whole file; for files bounded in size (segments, snapshots), so one buffer is fine.
    public static func readAll(_ path: String) throws(Failure) -> [UInt8] {
        let fd = try openFile(path, O_RDONLY)
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: try status(fd, path: path).size)
        let count = try bytes.withMutableBytes { (raw) throws(Failure) in try read(fd, into: raw, at: 0, path: path) }
        return Array(bytes[0..<count])
    }

    /// At most the first `limit` bytes of a small file (such as a `.sequence` file).
    public static func readPrefix(_ path: String, limit: Int) throws(Failure) -> [UInt8] {
        let fd = try openFile(path, O_RDONLY)
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: limit)
        let count = try bytes.withMutableBytes { (raw) throws(Failure) in try read(fd, into: raw, at: 0, path: path) }
        return Array(bytes[0..<count])
    }

    /// Writes a new file durably (`fsync`ed) before the caller renames or relies on it.
    /// Whatever was at `path` (a leftover, or a planted link) is removed and the file created
    /// afresh (`O_EXCL`): nothing outside the directory is ever truncated through it.
    public static func writeFile(_ path: String, _ bytes: [UInt8]) throws(Failure) {
        try removeFile(path)
        let fd = try openFile(path, O_WRONLY | O_CREAT | O_EXCL)
        defer { close(fd) }
        try writeAll(fd, bytes, at: 0, path: path)
        try syncFile(fd, path: path)
    }

    /// Writes a small file durably under `path` through `path.tmp` and a rename; the caller
    /// syncs the directory.
    public static func replaceFile(_ path: String, _ bytes: [UInt8]) throws(Failure) {
        let temporary = path + ".tmp"
        try writeFile(temporary, bytes)
        try renameFile(temporary, path)
    }

    /// `mkdir -p` with `Policy.directoryMode`; directories that exist already are fine.
    public static func createDirectory(_ path: String) throws(Failure) {
        var components: [String] = []
        for part in path.split(separator: "/", omittingEmptySubsequences: false) {
            components.append(String(part))
            let prefix = components.joined(separator: "/")
            if prefix.isEmpty { continue }
            if mkdir(prefix, Policy.directoryMode) != 0 && errno != EEXIST { throw fail("mkdir", path: prefix) }
        }
    }

    /// `chmod`, retried on EINTR.
    public static func setMode(_ path: String, _ mode: mode_t) throws(Failure) {
        while chmod(path, mode) != 0 {
            if errno != EINTR { throw fail("chmod", path: path) }
        }
    }

    /// Takes from an existing directory's mode what `allowed` does not grant: a directory
    /// others can write to lets them plant, swap or remove the gateway's files. Returns the
    /// mode it had when it changed it, nil when there was nothing to take. When `chmod`
    /// fails (the directory belongs to another user) and group or others may write, throws;
    /// when only reading or traversing was too wide, returns nil and leaves it.
    @discardableResult
    public static func restrictDirectory(_ path: String, to allowed: mode_t) throws(Failure) -> mode_t? {
        var info = stat()
        if stat(path, &info) != 0 { throw fail("stat", path: path) }
        let mode = info.st_mode & 0o7777
        guard mode & ~allowed != 0 else { return nil }
        if chmod(path, mode & allowed) == 0 { return mode }
        if mode & ~allowed & 0o022 != 0 { throw fail("chmod", path: path) }
        return nil
    }

    /// Throws (as a failed `mkdir`, ENOTDIR) unless `path` is a directory.
    public static func requireDirectory(_ path: String) throws(Failure) {
        var info = stat()
        if stat(path, &info) != 0 { throw fail("stat", path: path) }
        if (info.st_mode & S_IFMT) != S_IFDIR { throw fail("mkdir", path: path, errno: ENOTDIR) }
    }

    /// Opens (creating) `path` and takes an exclusive `flock` on it without waiting. Returns
    /// the descriptor holding the lock, or nil when another open file holds it. Closing the
    /// descriptor releases the lock, and so does the death of the process, `kill -9` included.
    public static func lockExclusively(_ path: String) throws(Failure) -> Int32? {
        let fd = try openFile(path, O_RDWR | O_CREAT)
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            if code == EINTR { continue }
            close(fd)
            if code == EWOULDBLOCK { return nil }
            throw fail("flock", path: path, errno: code)
        }
        return fd
    }

    /// The names in a directory, without `.` and `..`.
    public static func listDirectory(_ path: String) throws(Failure) -> [String] {
        guard let dir = opendir(path) else { throw fail("opendir", path: path) }
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
