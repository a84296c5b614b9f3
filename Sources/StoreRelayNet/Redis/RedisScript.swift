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

    func evalsha(keys: [String], arguments: [[UInt8]]) -> RESPCommand {
        RESPCommand([Array("EVALSHA".utf8), Array(sha1.utf8), Array(String(keys.count).utf8)]
            + keys.map { Array($0.utf8) } + arguments)
    }

    var load: RESPCommand { RESPCommand("SCRIPT", "LOAD", source) }
}
