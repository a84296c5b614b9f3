import StoreRelayCore
import StoreRelayCrypto
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Small POSIX file helpers for the dev CA: files are created with their final mode in the
/// `open(2)` call, so a private key is never readable by others, not even for an instant.
enum PrivateFiles {
    /// Creates `path` (which must not exist) with `mode`, writes `text` and fsyncs it.
    static func create(_ path: String, _ text: String, mode: mode_t) throws(SimulatorError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard fd >= 0 else { throw failure("cannot create \(path)") }
        defer { close(fd) }
        // The umask may have narrowed the mode further; a key must be exactly owner-only.
        guard fchmod(fd, mode) == 0 else { throw failure("cannot set the mode of \(path)") }
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw failure("cannot write \(path)") }
            offset += n
        }
        guard fsync(fd) == 0 else { throw failure("cannot flush \(path)") }
    }

    /// The whole file as UTF-8 text, or nil when it does not exist.
    static func contents(_ path: String) throws(SimulatorError) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw failure("cannot open \(path)")
        }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16384)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { throw failure("cannot read \(path)") }
            if n == 0 { break }
            bytes.append(contentsOf: chunk[0..<n])
            guard bytes.count <= 1 << 20 else { throw SimulatorError(.certificateAuthority, "\(path) is too large to be a PEM file") }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Whether anything exists at `path`.
    static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    /// Creates `path` and its missing parents (the last one with `mode`).
    static func makeDirectories(_ path: String, mode: mode_t) throws(SimulatorError) {
        if exists(path) { return }
        let parent = parentDirectory(of: path)
        if parent != path, !parent.isEmpty { try makeDirectories(parent, mode: 0o755) }
        guard mkdir(path, mode) == 0 || errno == EEXIST else { throw failure("cannot create the directory \(path)") }
    }

    /// Removes a directory and the regular files directly in it (a failed, partial dev CA).
    static func removeFlatDirectory(_ path: String, files: [String]) {
        for name in files { unlink(path + "/" + name) }
        rmdir(path)
    }

    /// Creates `directory` whole or not at all: `fill` writes `files` into a private sibling
    /// (mode 0700), which is synced and renamed into place, so a crash never leaves half of it.
    /// False when another process created `directory` first: the caller loads theirs. `what`
    /// names the contents in an error ("the new dev CA").
    static func createWhole(
        _ directory: String, files: [String], what: String, fill: (String) throws(SimulatorError) -> Void
    ) throws(SimulatorError) -> Bool {
        let parent = parentDirectory(of: directory)
        try makeDirectories(parent, mode: 0o755)
        let staging = directory + ".partial-" + SecureRandom.hexToken(6)
        guard mkdir(staging, 0o700) == 0 else { throw failure("cannot create \(staging)") }
        do throws(SimulatorError) {
            try fill(staging)
            syncDirectory(staging)
        } catch {
            removeFlatDirectory(staging, files: files)
            throw error
        }
        if rename(staging, directory) != 0 {
            let lostRace = errno == EEXIST || errno == ENOTEMPTY
            removeFlatDirectory(staging, files: files)
            if lostRace { return false }
            throw failure("cannot move \(what) into \(directory)")
        }
        syncDirectory(parent)
        return true
    }

    /// fsyncs a directory so a rename or file creation in it survives a crash.
    static func syncDirectory(_ path: String) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        fsync(fd)
        close(fd)
    }

    static func parentDirectory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    static func failure(_ what: String) -> SimulatorError {
        SimulatorError(.certificateAuthority, "\(what): \(String(cString: strerror(errno)))")
    }
}

/// PEM text (RFC 7468) from DER: base64 in 64-character lines between the labels.
enum PEMText {
    static func encode(_ der: [UInt8], label: String) -> String {
        let body = Array(Base64.encode(der))
        var lines: [String] = []
        var start = 0
        while start < body.count {
            let end = min(start + 64, body.count)
            lines.append(String(body[start..<end]))
            start = end
        }
        return "-----BEGIN \(label)-----\n" + lines.joined(separator: "\n") + "\n-----END \(label)-----\n"
    }
}
