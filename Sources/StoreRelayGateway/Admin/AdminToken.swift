import StoreRelayCrypto
import StoreRelayCore

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
        guard let bytes = try? PrivateFiles.readAll(path(dataDirectory: dataDirectory)) else { return nil }
        let text = String(decoding: bytes, as: UTF8.self)
        guard let first = text.firstIndex(where: { !$0.isWhitespace }), let last = text.lastIndex(where: { !$0.isWhitespace })
        else { return nil }
        return String(text[first...last])
    }

    /// Written 0600 through a temporary file, fsync and rename (see `replaceFileDurably`).
    private static func writeAtomically(_ token: String, to path: String, directory: String) throws(Failure) {
        do {
            try PrivateFiles.createDirectory(directory)
            try PrivateFiles.replaceFileDurably(path, Array((token + "\n").utf8))
        } catch {
            throw Failure(description: "cannot store the admin token: \(error)")
        }
    }
}
