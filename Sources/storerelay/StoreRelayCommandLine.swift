import StoreRelayCore

/// Dispatches `storerelay <command>` and turns errors into SPEC's exit codes:
/// 0 ok, 1 failure, 2 usage. Errors are one clear sentence on stderr.
enum StoreRelayCommandLine {
    static let commands: [any CommandDescribing.Type] = [
        ServeCommand.self, CheckCommand.self, VerifyCommand.self, SimulateCommand.self, DlqCommand.self, EventsCommand.self, DestinationCommand.self,
        ReconcileCommand.self,
        ProbeCommand.self, VersionCommand.self,
    ]

    static let usage = """
        storerelay — the App Store Server Notifications gateway

        Usage: storerelay <command> [options]

        Commands:
        \(commands.map { "  " + $0.name.padding(10) + $0.summary }.joined(separator: "\n"))

        Run `storerelay <command> --help` for a command's options.
        The configuration file comes from --config, else $STORERELAY_CONFIG, else ./routes.conf
        (and when none of these exists, the embedded default configuration).
        """

    static func run(_ arguments: [String]) -> Int32 {
        guard let first = arguments.first else {
            writeStandardError(usage)
            return ExitCode.usage
        }
        if first == "--help" || first == "-h" || first == "help" {
            writeStandardOutput(usage)
            return ExitCode.ok
        }
        if first == "--version" { return VersionCommand.run([]) }
        guard let command = commands.first(where: { $0.name == first }) else {
            writeStandardError("storerelay: unknown command '\(first)'. Run `storerelay --help` for the list.")
            return ExitCode.usage
        }
        let rest = Array(arguments.dropFirst())
        if rest.contains("--help") || rest.contains("-h") {
            writeStandardOutput(command.help)
            return ExitCode.ok
        }
        return command.run(rest)
    }
}

/// SPEC's exit codes.
enum ExitCode {
    static let ok: Int32 = 0
    static let failure: Int32 = 1
    static let usage: Int32 = 2
}

/// What every command tells `--help` and the command list about itself.
protocol CommandDescribing: Sendable {
    static var name: String { get }
    static var summary: String { get }
    static var help: String { get }
    static func run(_ arguments: [String]) -> Int32
}

extension String {
    func padding(_ width: Int) -> String {
        count >= width ? self + " " : self + String(repeating: " ", count: width - count)
    }
}
