import StoreRelayNet

/// A Lua script's input as one small type. Its fields say what the script reads; `keys` and
/// `arguments` put them in the order the script's header lists, in one place beside the
/// script, so no caller counts `KEYS` or `ARGV` positions.
protocol ScriptCall: Sendable {
    /// The script this input is for.
    static var script: RedisScript { get }
    /// `KEYS`, in order.
    var keys: [String] { get }
    /// `ARGV`, in order.
    var arguments: [[UInt8]] { get }
}

extension RedisClient {
    /// Runs `call`'s script on its keys and arguments.
    func evaluate<Call: ScriptCall>(_ call: Call, completion: @escaping @Sendable (Result<RESPValue, RedisError>) -> Void) {
        evaluate(Call.script, keys: call.keys, arguments: call.arguments, completion: completion)
    }
}

/// How the scripts take their arguments: text as UTF-8, numbers in decimal, and an absent
/// value as the empty string (Lua tests `ARGV[n] == ''`).
enum ScriptArgument {
    static func text(_ value: String?) -> [UInt8] { Array((value ?? "").utf8) }
    static func number(_ value: some BinaryInteger) -> [UInt8] { Array(String(value).utf8) }
    static func flag(_ value: Bool) -> [UInt8] { value ? Array("1".utf8) : [] }
}
