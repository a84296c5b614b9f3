import StoreRelayGateway
import StoreRelayCore

/// One validated `dlq` invocation, checked in full before any request is sent.
enum DlqAction {
    struct Filters {
        var destination: String?
        var reason: String?
        /// `list` only: the search filters, as the API's query names and values.
        var search: [(String, String)] = []
    }

    /// `list`'s search options and the API query names they become.
    static let searchOptions: [(option: String, query: String)] = [
        ("event-id", "eventId"), ("original-transaction-id", "originalTransactionId"),
        ("transaction-id", "transactionId"), ("bundle-id", "bundleId"), ("type", "type"),
        ("since", "since"), ("until", "until"),
    ]

    case list(Filters, limit: Int, json: Bool)
    case show(id: String)
    /// `force`: past the staleness rule (a notification signed before the dedupe-window).
    case replay(ids: [String], force: Bool)
    case replayAll(Filters, confirmed: Bool, dryRun: Bool, force: Bool)
    case purge(ids: [String])
    case purgeAll(Filters, olderThanMilliseconds: Int64?, confirmed: Bool, dryRun: Bool)

    /// What `--reason` takes: the stored reasons and `not-understood` (the quarantined letters
    /// this build could not read), as the API names them.
    static let reasons = DeadLetterSummary.reasonFilters

    init(subcommand: String, operands: [String], parsed: ParsedArguments) throws(AdminCommandFailure) {
        var filters = Filters(destination: parsed.option("destination"), reason: parsed.option("reason"))
        filters.search = Self.searchOptions.compactMap { option, query in parsed.option(option).map { (query, $0) } }
        if let reason = filters.reason, !Self.reasons.contains(reason) {
            throw .usage("--reason must be one of \(Self.reasons.joined(separator: ", ")), not '\(reason)'")
        }
        let all = parsed.flag("all")
        let filtered = filters.destination != nil || filters.reason != nil
        func refuse(_ names: [String], _ context: String) throws(AdminCommandFailure) {
            for name in names where parsed.option(name) != nil || parsed.flag(name) {
                throw .usage("--\(name) does not apply to \(context)")
            }
        }
        switch subcommand {
        case "list":
            try refuse(["all", "yes", "dry-run", "force", "older-than"], "list")
            guard operands.isEmpty else { throw .usage("list takes no arguments; use --destination and --reason to filter") }
            var limit = 100
            if let text = parsed.option("limit") {
                guard let value = Int(text), value > 0 else { throw .usage("--limit must be a positive number, not '\(text)'") }
                limit = value
            }
            self = .list(filters, limit: limit, json: parsed.flag("json"))
        case "show":
            try refuse(["all", "yes", "dry-run", "force", "older-than", "limit", "json", "destination", "reason"]
                       + Self.searchOptions.map(\.option), "show")
            guard operands.count == 1 else { throw .usage("show takes exactly one dead-letter id") }
            self = .show(id: operands[0])
        case "replay", "purge":
            try refuse(["limit", "json"] + Self.searchOptions.map(\.option), subcommand)
            if subcommand == "replay" { try refuse(["older-than"], "replay") } else { try refuse(["force"], "purge") }
            if all {
                guard operands.isEmpty else { throw .usage("give dead-letter ids or --all, not both") }
                let confirmed = parsed.flag("yes"), dryRun = parsed.flag("dry-run")
                if subcommand == "replay" {
                    self = .replayAll(filters, confirmed: confirmed, dryRun: dryRun, force: parsed.flag("force"))
                } else {
                    let age = try parsed.option("older-than").map { (text) throws(AdminCommandFailure) -> Int64 in
                        guard let value = Self.milliseconds(text) else {
                            throw .usage("--older-than takes a duration such as 30d, 12h or 90m, not '\(text)'")
                        }
                        return value
                    }
                    self = .purgeAll(filters, olderThanMilliseconds: age, confirmed: confirmed, dryRun: dryRun)
                }
            } else {
                guard !operands.isEmpty else { throw .usage("\(subcommand) needs dead-letter ids, or --all") }
                guard !filtered else { throw .usage("--destination and --reason apply only with --all") }
                try refuse(["yes", "dry-run", "older-than"], "\(subcommand) by id")
                self = subcommand == "replay" ? .replay(ids: operands, force: parsed.flag("force")) : .purge(ids: operands)
            }
        default:
            throw .usage("unknown subcommand '\(subcommand)'; use list, show, replay or purge")
        }
    }

    /// `500ms`, `45s`, `90m`, `12h`, `30d`, `2w`.
    static func milliseconds(_ text: String) -> Int64? {
        Duration(compact: text)?.wholeMilliseconds
    }
}
