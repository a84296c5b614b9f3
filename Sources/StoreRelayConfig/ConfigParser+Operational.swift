/// `operational-events -> NAME`, `intake-silence DURATION`, `disk-low SIZE` (SPEC "Event log,
/// search and operational events"). The destination is checked against the declared ones in
/// `resolve`, once the whole file is read: it may be declared after the directive.
extension ConfigParser {
    static let operationalEventsSyntax = "operational-events -> DESTINATION"

    mutating func operationalDirective(_ head: ConfigToken, _ arguments: [ConfigToken]) {
        switch head.text {
        case "operational-events":
            guard let arrow = arguments.first, arrow.isSyntax("->") else {
                report(.missingArrow, line: head.line, column: arguments.first?.column ?? head.endColumn,
                       "missing '->' in operational-events (expected \(Self.operationalEventsSyntax))")
                return
            }
            guard arity(head, arguments, 2...2, Self.operationalEventsSyntax) else { return }
            let name = arguments[1]
            // One destination: a comma list would make "which one failed?" ambiguous in the
            // no-recursion rule, and a fan-out belongs in the destination (a chat relay).
            guard !name.text.contains(",") else {
                report(.invalidValue, at: name, "invalid operational-events destination: '\(name.text)' names more than one (expected one destination)")
                return
            }
            operationalEvents.destination = name.text
            operationalEventsToken = name
        case "intake-silence":
            guard arity(head, arguments, 1...1, "intake-silence DURATION") else { return }
            if let silence = value(arguments[0], "intake-silence", { text throws(ConfigValueError) in
                let duration = try ConfigValue.duration(text)
                // Below a minute every pause between two notifications would be reported.
                guard duration >= .seconds(60) else { throw ConfigValueError("'\(text)' is shorter than 1m (expected a duration like 6h)") }
                return duration
            }) {
                operationalEvents.intakeSilence = silence
            }
        case "disk-low":
            guard arity(head, arguments, 1...1, "disk-low SIZE") else { return }
            if let size = value(arguments[0], "disk-low", ConfigValue.size) { operationalEvents.diskLow = size }
        default:
            preconditionFailure("operational directive '\(head.text)' not handled")
        }
    }
}
