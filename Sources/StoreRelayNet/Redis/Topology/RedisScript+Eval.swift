extension RedisScript {
    /// `EVAL` with the whole source: for a node that may not have the script (a redirection's
    /// target), which also caches it there for the next `EVALSHA`.
    func eval(keys: [String], arguments: [[UInt8]]) -> RESPCommand {
        RESPCommand([Array("EVAL".utf8), Array(source.utf8), Array(String(keys.count).utf8)] + keys.map { Array($0.utf8) } + arguments)
    }
}
