/// One command as the server reads it: an array of bulk strings (RESP2 "inline" commands are
/// never sent), so arguments may hold any bytes, spaces and CRLFs included.
public struct RESPCommand: Sendable, Hashable, CustomStringConvertible {
    public var arguments: [[UInt8]]

    public init(_ arguments: [[UInt8]]) {
        self.arguments = arguments
    }

    public init(_ name: String, _ arguments: String...) {
        self.arguments = [Array(name.utf8)] + arguments.map { Array($0.utf8) }
    }

    public init(_ name: String, _ arguments: [String]) {
        self.arguments = [Array(name.utf8)] + arguments.map { Array($0.utf8) }
    }

    /// The command's name, for logs and errors (never its arguments: they may be secrets).
    public var name: String { arguments.first.map { String(decoding: $0, as: UTF8.self) } ?? "" }

    public var description: String { name }

    /// Appends the wire form: `*N`, then `$len` and the bytes of each argument.
    public func encode(into out: inout [UInt8]) {
        out.append(UInt8(ascii: "*"))
        out.append(contentsOf: String(arguments.count).utf8)
        out.append(contentsOf: [13, 10])
        for argument in arguments {
            out.append(UInt8(ascii: "$"))
            out.append(contentsOf: String(argument.count).utf8)
            out.append(contentsOf: [13, 10])
            out.append(contentsOf: argument)
            out.append(contentsOf: [13, 10])
        }
    }

    public var encoded: [UInt8] {
        var out: [UInt8] = []
        encode(into: &out)
        return out
    }
}
