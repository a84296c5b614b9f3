internal import COpenSSL

/// A Lua script run with `EVALSHA`, and loaded with `SCRIPT LOAD` the first time a server
/// answers `NOSCRIPT` (after a restart or a failover the script cache is empty).
public struct RedisScript: Sendable, Hashable {
    public let source: String
    /// The SHA-1 of `source` in lowercase hex, as the server names it.
    public let sha1: String

    /// `sha1` must be the SHA-1 of `source` (the server's `SCRIPT LOAD` reply is checked
    /// against it, so a wrong one fails loudly rather than running the wrong script).
    public init(source: String, sha1: String) {
        self.source = source
        self.sha1 = sha1.lowercased()
    }

    /// The script whose SHA-1 is computed here (OpenSSL's EVP), as the server will.
    public init(source: String) {
        var digest = [UInt8](repeating: 0, count: 20)
        let bytes = Array(source.utf8)
        let done = bytes.withUnsafeBufferPointer { input in
            digest.withUnsafeMutableBufferPointer { output in
                EVP_Digest(input.baseAddress, input.count, output.baseAddress, nil, EVP_sha1(), nil) == 1
            }
        }
        // A digest of memory in hand cannot fail; a broken OpenSSL would, loudly, at SCRIPT LOAD.
        let hex = done ? digest.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined() : String(repeating: "0", count: 40)
        self.init(source: source, sha1: hex)
    }

    func evalsha(keys: [String], arguments: [[UInt8]]) -> RESPCommand {
        RESPCommand([Array("EVALSHA".utf8), Array(sha1.utf8), Array(String(keys.count).utf8)]
            + keys.map { Array($0.utf8) } + arguments)
    }

    var load: RESPCommand { RESPCommand("SCRIPT", "LOAD", source) }
}
