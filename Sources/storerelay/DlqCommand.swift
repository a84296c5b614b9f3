import StoreRelayGateway
import StoreRelayCore

/// `storerelay dlq`: lists, shows, replays and purges dead letters through a running
/// gateway's admin listener (SPEC "Command line").
enum DlqCommand: CommandDescribing {
    static let name = "dlq"
    static let summary = "list, show, replay or purge dead letters on a running gateway"
    static let help = """
        Usage: storerelay dlq list    [--destination D] [--reason R] [--limit N] [--json]
               storerelay dlq show    ID
               storerelay dlq replay  ID... | --all [--destination D] [--reason R] [--yes | --dry-run]
                                      [--force]
               storerelay dlq purge   ID... | --all [--older-than 30d] [--destination D] [--reason R]
                                                    [--yes | --dry-run]

        Talks to the running gateway's admin listener. The URL and token come from --admin and
        --token, else from the configuration (its `admin` address and `admin-token`, else the
        token file DATA/admin.token that `storerelay serve` writes on its machine).

        list     prints a table of dead letters, newest first (--json: a JSON array of records)
        show     prints one dead letter as JSON
        replay   re-queues dead letters with a fresh attempt budget; each leaves the store when
                 its replayed delivery succeeds
        purge    deletes dead letters for good

        With --all, replay and purge first count what matches and print it; they act only with
        --yes (--dry-run: count and stop). --older-than keeps only letters created longer ago
        than the duration (ms, s, m, h, d, w; e.g. 30d). replay --all leaves quarantined letters
        out unless --reason quarantined (or not-understood) asks for them.

        A replay of a notification signed before the dedupe-window is refused (stale: its
        destination could not tell it from a first delivery); --force replays it anyway.

        Options:
          --admin URL        the admin listener, e.g. http://127.0.0.1:9090
          --token T          the admin token
          --config FILE      the configuration (default: $STORERELAY_CONFIG, ./routes.conf, or
                             the embedded default)
          --destination D    only dead letters for destination D
          --reason R         only exhausted, rejected, unrouted, quarantined, unreadable or
                             tampered ones, or not-understood: quarantined ones this build
                             could not read
          --force            replay stale notifications too
          --limit N          list at most N (default 100)
          --event-id ID, --original-transaction-id ID, --transaction-id ID, --bundle-id B,
          --type T           list only dead letters of that notification, subscription,
                             transaction, app or notification type
          --since T, --until T  list only those made from / before T: an ISO-8601 time
                             (2026-11-20T10:15:30Z) or an age back from now (24h, 7d)
          --json             list as a JSON array of dead-letter records

        Exit status: 0 done, 1 failure (server unreachable, token refused, not found), 2 usage.
        """

    static let spec = ArgumentSpec(
        valueOptions: Set(["admin", "token", "config", "destination", "reason", "limit", "older-than"]
            + DlqAction.searchOptions.map(\.option)),
        flags: ["json", "all", "yes", "dry-run", "force"], maxPositionals: Int.max)

    static func run(_ arguments: [String]) -> Int32 {
        let parsed: ParsedArguments
        do {
            parsed = try spec.parse(arguments)
        } catch {
            return fail(.usage(error.description))
        }
        guard let subcommand = parsed.positionals.first else {
            return fail(.usage("name a subcommand: list, show, replay or purge (see `storerelay dlq --help`)"))
        }
        let operands = Array(parsed.positionals.dropFirst())
        do {
            let action = try DlqAction(subcommand: subcommand, operands: operands, parsed: parsed)
            let client = try AdminClient.connect(parsed)
            defer { client.shutdown() }
            return try action.run(client)
        } catch {
            return fail(error)
        }
    }

    private static func fail(_ failure: AdminCommandFailure) -> Int32 {
        writeStandardError("storerelay dlq: \(failure.message)")
        return failure.exitCode
    }
}
