import StoreRelayGateway
import StoreRelayCore

/// `storerelay destination`: lists destinations, and pauses or resumes one, through a running
/// gateway's admin listener (SPEC "Delivery controls"), the way `dlq` does.
enum DestinationCommand: CommandDescribing {
    static let name = "destination"
    static let summary = "list destinations, or pause or resume one, on a running gateway"
    static let help = """
        Usage: storerelay destination list   [NAME] [--json]
               storerelay destination pause  NAME
               storerelay destination resume NAME

        Talks to the running gateway's admin listener. The URL and token come from --admin and
        --token, else from the configuration (its `admin` address and `admin-token`, else the
        token file DATA/admin.token that `storerelay serve` writes on its machine).

        list     prints a table of destinations (all, or NAME): state (active or paused), what
                 waits, what is in flight, the breaker and the dead letters
        pause    starts no further attempt to NAME; its backlog waits, nothing is dead-lettered
                 for the pause, and it stays paused across restarts (in cluster mode, on every
                 instance) until resumed
        resume   delivers NAME's backlog again

        Options:
          --admin URL        the admin listener, e.g. http://127.0.0.1:9090
          --token T          the admin token
          --config FILE      the configuration (default: $STORERELAY_CONFIG, ./routes.conf, or
                             the embedded default)
          --json             list as a JSON array

        Exit status: 0 done, 1 failure (server unreachable, token refused, no such
        destination), 2 usage.
        """

    static let spec = ArgumentSpec(valueOptions: ["admin", "token", "config"], flags: ["json"], maxPositionals: 2)

    static func run(_ arguments: [String]) -> Int32 {
        let parsed: ParsedArguments
        do {
            parsed = try spec.parse(arguments)
        } catch {
            return fail(.usage(error.description))
        }
        let positionals = parsed.positionals
        guard let subcommand = positionals.first, ["list", "pause", "resume"].contains(subcommand) else {
            return fail(.usage("name a subcommand: list, pause or resume (see `storerelay destination --help`)"))
        }
        let name = positionals.dropFirst().first
        if subcommand != "list" && name == nil { return fail(.usage("\(subcommand) needs a destination NAME")) }
        do {
            let client = try AdminClient.connect(parsed)
            defer { client.shutdown() }
            if let name, subcommand != "list" { return try setPaused(subcommand == "pause", name, client) }
            return try list(only: name, json: parsed.flags.contains("json"), client)
        } catch {
            return fail(error)
        }
    }

    private static func list(only name: String?, json: Bool, _ client: AdminClient) throws(AdminCommandFailure) -> Int32 {
        let answer = try client.send("GET", "/api/destinations")
        guard answer.status == 200, var items = answer.json?["items"]?.arrayValue else {
            throw .failure("listing destinations failed: \(answer.message)")
        }
        if let name {
            items = items.filter { $0["name"]?.stringValue == name }
            guard !items.isEmpty else { throw .failure("there is no destination \(name)") }
        }
        writeStandardOutput(json ? PrettyJSON.render(.array(items)) : DestinationTable.render(items))
        return ExitCode.ok
    }

    private static func setPaused(_ pause: Bool, _ name: String, _ client: AdminClient) throws(AdminCommandFailure) -> Int32 {
        let answer = try client.send("POST", "/api/destinations/\(FormEncoding.percentEncode(name))/\(pause ? "pause" : "resume")")
        switch answer.status {
        case 200:
            let changed = answer.json?["changed"]?.boolValue ?? true
            writeStandardOutput(pause ? (changed ? "paused \(name)" : "\(name) was already paused")
                                      : (changed ? "resumed \(name)" : "\(name) was not paused"))
            return ExitCode.ok
        case 404: throw .failure("there is no destination \(name)")
        case 400: throw .failure("'\(name)' is not a destination name")
        default: throw .failure("\(pause ? "pausing" : "resuming") \(name) failed: \(answer.message)")
        }
    }

    private static func fail(_ failure: AdminCommandFailure) -> Int32 {
        writeStandardError("storerelay destination: \(failure.message)")
        return failure.exitCode
    }
}
