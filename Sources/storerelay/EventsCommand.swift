import StoreRelayGateway
import StoreRelayCore

/// `storerelay events`: searches the event log and shows one event through a running
/// gateway's admin listener (SPEC "Event log, search and operational events"), as `dlq` does
/// for dead letters.
enum EventsCommand: CommandDescribing {
    static let name = "events"
    static let summary = "search accepted events and their delivery states on a running gateway"
    static let help = """
        Usage: storerelay events list [--q ID] [--app BUNDLE] [--environment ENV] [--type T]
                                      [--state STATE] [--destination D] [--since T] [--until T]
                                      [--limit N] [--json]
               storerelay events show ID
               storerelay events redeliver ID --destination NAME

        Talks to the running gateway's admin listener. The URL and token come from --admin and
        --token, else from the configuration (its `admin` address and `admin-token`, else the
        token file DATA/admin.token that `storerelay serve` writes on its machine).

        list     prints accepted events newest first, with each destination's delivery state
                 (--json: a JSON array of the API's items)
        show     prints one event and its deliveries as JSON
        redeliver  sends an already delivered event to destination NAME again, with its
                 original webhook-id and StoreRelay-Redelivery: 1
                 (POST /api/events/{id}/redeliver)

        Options:
          --admin URL        the admin listener, e.g. http://127.0.0.1:9090
          --token T          the admin token
          --config FILE      the configuration (default: $STORERELAY_CONFIG, ./routes.conf, or
                             the embedded default)
          --q ID             a notificationUUID, originalTransactionId or transactionId, exactly
          --app BUNDLE       only events of that bundle id
          --environment E    production, sandbox, xcode or localtesting
          --type T           only that notification type (DID_RENEW, REFUND...)
          --state S          pending, delivered or dead-lettered: a delivery in that state
                             (to --destination D if given, or written D:S)
          --since T, --until T  an ISO-8601 time (2026-11-20T10:15:30Z) or an age back from
                             now (24h, 7d)
          --limit N          list at most N (default 100)
          --destination D    (redeliver) the destination to send the event to again
          --json             list as a JSON array

        Exit status: 0 done, 1 failure (server unreachable, token refused, not found, a filter
        the server refused), 2 usage.
        """

    /// Each list option and the query parameter it becomes.
    static let filterOptions = ["q", "app", "environment", "type", "state", "destination", "since", "until"]

    static let spec = ArgumentSpec(valueOptions: Set(["admin", "token", "config", "limit"] + filterOptions), flags: ["json"],
                                   maxPositionals: 2)

    static func run(_ arguments: [String]) -> Int32 {
        let parsed: ParsedArguments
        do {
            parsed = try spec.parse(arguments)
        } catch {
            return fail(.usage(error.description))
        }
        let positionals = parsed.positionals
        do throws(AdminCommandFailure) {
            switch positionals.first {
            case "list":
                guard positionals.count == 1 else { throw AdminCommandFailure.usage("list takes options only, not '\(positionals[1])'") }
                var limit = 100
                if let text = parsed.options["limit"] {
                    guard let value = Int(text), value > 0 else { throw AdminCommandFailure.usage("--limit takes a whole number above 0") }
                    limit = value
                }
                let filters = filterOptions.compactMap { option in parsed.options[option].map { (option, $0) } }
                let client = try AdminClient.connect(parsed)
                defer { client.shutdown() }
                return try list(filters, limit: limit, json: parsed.flags.contains("json"), client)
            case "redeliver":
                guard positionals.count == 2 else { throw AdminCommandFailure.usage("redeliver needs one event ID") }
                guard let destination = parsed.options["destination"], !destination.isEmpty else {
                    throw AdminCommandFailure.usage("redeliver needs --destination NAME")
                }
                let client = try AdminClient.connect(parsed)
                defer { client.shutdown() }
                return try redeliver(positionals[1], to: destination, client)
            case "show":
                guard positionals.count == 2 else { throw AdminCommandFailure.usage("show needs one event ID") }
                let client = try AdminClient.connect(parsed)
                defer { client.shutdown() }
                return try show(positionals[1], client)
            default:
                throw AdminCommandFailure.usage("name a subcommand: list, show or redeliver (see `storerelay events --help`)")
            }
        } catch {
            return fail(error)
        }
    }

    private static func list(_ filters: [(String, String)], limit: Int, json: Bool, _ client: AdminClient) throws(AdminCommandFailure) -> Int32 {
        var items: [JSONValue] = []
        var cursor: String?
        repeat {
            var query = filters + [("limit", String(min(500, limit - items.count)))]
            if let cursor { query.append(("cursor", cursor)) }
            let answer = try client.send("GET", "/api/events?" + FormEncoding.encode(query))
            guard answer.status == 200, let page = answer.json?["items"]?.arrayValue else {
                throw .failure(answer.status == 400 ? answer.message : "listing events failed: \(answer.message)")
            }
            items += page
            cursor = answer.json?["nextCursor"]?.stringValue
        } while cursor != nil && items.count < limit
        if json {
            writeStandardOutput(PrettyJSON.render(.array(items)))
        } else {
            writeStandardOutput(EventTable.render(items))
            let noun = items.count == 1 ? "event" : "events"
            writeStandardOutput(cursor != nil ? "\(items.count) \(noun) shown; more match (raise --limit)" : "\(items.count) \(noun)")
        }
        return ExitCode.ok
    }

    private static func show(_ id: String, _ client: AdminClient) throws(AdminCommandFailure) -> Int32 {
        let answer = try client.send("GET", "/api/events/" + FormEncoding.percentEncode(id))
        switch answer.status {
        case 200:
            writeStandardOutput(PrettyJSON.render(answer.json ?? .null))
            return ExitCode.ok
        case 404: throw .failure("no event \(id) is known to the gateway")
        case 400: throw .failure("'\(id)' is not an event id")
        default: throw .failure("showing event \(id) failed: \(answer.message)")
        }
    }

    /// The server's sentence on failure: it knows whether the event, the destination or the
    /// state of its delivery is what stands in the way.
    private static func redeliver(_ id: String, to destination: String, _ client: AdminClient) throws(AdminCommandFailure) -> Int32 {
        let answer = try client.send("POST", "/api/events/" + FormEncoding.percentEncode(id) + "/redeliver",
                                     json: ["destination": .string(destination)])
        // 202: queued; the event view shows the delivery pending until it lands.
        guard answer.status == 202 else { throw .failure("redelivering \(id) to \(destination) failed: \(answer.message)") }
        writeStandardOutput("queued: \(id) goes to \(destination) again, marked StoreRelay-Redelivery: 1")
        return ExitCode.ok
    }

    private static func fail(_ failure: AdminCommandFailure) -> Int32 {
        writeStandardError("storerelay events: \(failure.message)")
        return failure.exitCode
    }
}
