import Foundation
import StoreRelayCrypto
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The admin listener's bearer token (SPEC "routes.conf": `admin-token`, else generated at
/// start into `DATA/admin.token` with mode 0600 and reused afterwards).
public enum AdminToken {
    /// Why a token could not be resolved; carries the path and errno.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// The file holding the generated token.
    public static func path(dataDirectory: String) -> String { dataDirectory + "/admin.token" }

    /// The configured token; else the one in `DATA/admin.token`; else a new random 32-byte hex
    /// token written there atomically with mode 0600.
    public static func resolve(configured: String?, dataDirectory: String) throws(Failure) -> String {
        if let configured, !configured.isEmpty { return configured }
        if let existing = read(dataDirectory: dataDirectory) { return existing }
        let token = SecureRandom.hexToken(32)
        try writeAtomically(token, to: path(dataDirectory: dataDirectory), directory: dataDirectory)
        return token
    }

    /// The token in `DATA/admin.token`, trimmed, or nil when absent, unreadable or empty. The
    /// CLI uses this when it runs on the gateway's machine.
    public static func read(dataDirectory: String) -> String? {
        guard let data = FileManager.default.contents(atPath: path(dataDirectory: dataDirectory)) else { return nil }
        let token = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return token.isEmpty ? nil : token
    }

    /// Temporary file created 0600 (never readable by others, not even briefly), fsync, rename.
    private static func writeAtomically(_ token: String, to path: String, directory: String) throws(Failure) {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw Failure(description: "cannot create the data directory \(directory): \(error.localizedDescription)")
        }
        let temporary = path + ".tmp"
        unlink(temporary)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw failure("cannot create \(temporary)") }
        let bytes = Array((token + "\n").utf8)
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard written == bytes.count, fsync(fd) == 0 else {
            let error = failure("cannot write \(temporary)")
            close(fd)
            unlink(temporary)
            throw error
        }
        close(fd)
        guard rename(temporary, path) == 0 else {
            let error = failure("cannot rename \(temporary) to \(path)")
            unlink(temporary)
            throw error
        }
        let directoryFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryFD >= 0 {
            fsync(directoryFD)
            close(directoryFD)
        }
    }

    private static func failure(_ what: String) -> Failure {
        Failure(description: "\(what): \(String(cString: strerror(errno)))")
    }
}
