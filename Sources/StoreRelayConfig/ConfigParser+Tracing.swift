import StoreRelayNet

/// `tracing otlp URL [ca-file PEM-FILE]`.
extension ConfigParser {
    mutating func tracingDirective(_ head: ConfigToken, _ arguments: [ConfigToken]) {
        let syntax = "tracing otlp URL [ca-file PEM-FILE]"
        guard once(head), arity(head, arguments, 2...4, syntax) else { return }
        // `otlp` names the protocol, so another exporter can be added beside it.
        guard arguments[0].text == "otlp" else {
            report(.invalidValue, at: arguments[0], "unknown tracing exporter '\(arguments[0].text)' (expected 'otlp': \(syntax))")
            return
        }
        // Spans name events, apps and destinations: plaintext only to this machine (a local
        // collector or agent), as with the SQS endpoint.
        guard let url = value(arguments[1], "tracing otlp URL", { text throws(ConfigValueError) in
            try Self.loopbackOrHTTPS(text, "collector URL")
        }) else { return }
        var caFile: String?
        if arguments.count > 2 {
            guard arguments[2].text == "ca-file", arguments.count == 4 else {
                report(.invalidValue, at: arguments[2], "expected 'ca-file PEM-FILE' after the URL (\(syntax))")
                return
            }
            guard let file = pathValue(arguments[3], "ca-file") else { return }
            caFile = file
        }
        tracing = TracingConfiguration(url: url, caFile: caFile)
    }
}
