import StoreRelayCore

/// `storerelay version`: prints the version.
enum VersionCommand: CommandDescribing {
    static let name = "version"
    static let summary = "print the version"
    static let help = """
        Usage: storerelay version

        Prints StoreRelay's version.
        """

    static func run(_ arguments: [String]) -> Int32 {
        do {
            _ = try ArgumentSpec().parse(arguments)
        } catch {
            writeStandardError("storerelay version: \(error)")
            return ExitCode.usage
        }
        writeStandardOutput("storerelay \(StoreRelayVersion.current)")
        return ExitCode.ok
    }
}
