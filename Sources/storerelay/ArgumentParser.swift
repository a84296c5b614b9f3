/// A small command-line parser: `--name value`, `--name=value`, boolean `--flag`, positionals,
/// and `--` to end options. Every command declares what it takes; anything else is a usage error.
struct ParsedArguments {
    var options: [String: String] = [:]
    var flags: Set<String> = []
    var positionals: [String] = []

    func option(_ name: String) -> String? { options[name] }
    func flag(_ name: String) -> Bool { flags.contains(name) }
}

/// A mistake in how a command was invoked; exits with status 2.
struct UsageError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// What a command accepts. `valueOptions` take one value each; `flags` take none.
struct ArgumentSpec {
    var valueOptions: Set<String> = []
    var flags: Set<String> = []
    var maxPositionals: Int = 0

    func parse(_ arguments: [String]) throws(UsageError) -> ParsedArguments {
        var result = ParsedArguments()
        var index = 0
        var optionsEnded = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if optionsEnded || !argument.hasPrefix("--") || argument == "-" {
                result.positionals.append(argument)
                continue
            }
            if argument == "--" { optionsEnded = true; continue }
            var name = String(argument.dropFirst(2))
            var inlineValue: String?
            if let equals = name.firstIndex(of: "=") {
                inlineValue = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            if valueOptions.contains(name) {
                if let inlineValue {
                    result.options[name] = inlineValue
                } else {
                    guard index < arguments.count else { throw UsageError("option --\(name) needs a value") }
                    result.options[name] = arguments[index]
                    index += 1
                }
            } else if flags.contains(name), inlineValue == nil {
                result.flags.insert(name)
            } else {
                throw UsageError("unknown option --\(name)")
            }
        }
        if result.positionals.count > maxPositionals {
            throw UsageError(maxPositionals == 0
                ? "unexpected argument '\(result.positionals[0])'"
                : "too many arguments")
        }
        return result
    }
}
