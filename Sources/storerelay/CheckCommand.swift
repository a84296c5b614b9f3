import StoreRelayConfig

/// `storerelay check`: validates the configuration and prints what it resolves to.
enum CheckCommand: CommandDescribing {
    static let name = "check"
    static let summary = "validate the configuration and print the resolved route table"
    static let help = """
        Usage: storerelay check [--config FILE]

        Parses and validates the configuration, reads every file it names (trust-root, tls,
        ca-file, api-key, client-cert), then prints the listeners, environments, apps,
        destinations (secrets and passwords shown as <set>), the files as absolute paths and
        the route table in order.
        Relative paths are relative to the working directory. On errors, prints every one of
        them (file:line:column, or the file that cannot be read) and exits 1.

        Options:
          --config FILE   the configuration (default: $STORERELAY_CONFIG, ./routes.conf, or
                          the embedded default)
        """

    static func run(_ arguments: [String]) -> Int32 {
        let parsed: ParsedArguments
        do {
            parsed = try ArgumentSpec(valueOptions: ["config"]).parse(arguments)
        } catch {
            writeStandardError("storerelay check: \(error)")
            return ExitCode.usage
        }
        do {
            let configuration = try ConfigurationLoader.load(option: parsed.option("config"))
            // A file `serve` would fail to read fails the check too, rather than the start.
            let unreadable = configuration.unreadableFiles()
            guard unreadable.isEmpty else {
                for problem in unreadable { writeStandardError("\(configuration.sourceFile): cannot read \(problem)") }
                return ExitCode.failure
            }
            writeStandardOutput(configuration.checkReport())
            for warning in configuration.warnings { writeStandardError("warning: " + warning) }
            return ExitCode.ok
        } catch {
            writeStandardError(error.description)
            return ExitCode.failure
        }
    }
}
