import StoreRelayGateway
import StoreRelayCore

/// What each `dlq` action does against the admin API.
extension DlqAction {
    func run(_ client: AdminClient) throws(AdminCommandFailure) -> Int32 {
        switch self {
        case .list(let filters, let limit, let json):
            let listing = try client.listAll(filters, limit: limit)
            if json {
                writeStandardOutput(PrettyJSON.render(.array(listing.items)))
            } else {
                writeStandardOutput(DlqTable.render(listing.items.map(DeadLetterSummary.init(record:)), now: .now()))
                let noun = listing.items.count == 1 ? "dead letter" : "dead letters"
                writeStandardOutput(listing.more
                    ? "\(listing.items.count) \(noun) shown; more match (raise --limit)"
                    : "\(listing.items.count) \(noun)")
            }
            return ExitCode.ok
        case .show(let id):
            let answer = try client.send("GET", AdminClient.letterPath(id))
            guard answer.status == 200, let record = answer.json else { throw Self.failure(answer, id: id) }
            writeStandardOutput(PrettyJSON.render(record))
            return ExitCode.ok
        case .replay(let ids, let force):
            return try each(ids) { id throws(AdminCommandFailure) in
                let answer = try client.send("POST", AdminClient.letterPath(id, suffix: force ? "/replay?force=1" : "/replay"))
                guard answer.status == 200 else { throw Self.failure(answer, id: id) }
                let targets = answer.json?["destinations"]?.arrayValue?.compactMap(\.stringValue) ?? []
                return "replayed \(id)" + (targets.isEmpty ? "" : " to " + targets.joined(separator: ", "))
            }
        case .purge(let ids):
            return try each(ids) { id throws(AdminCommandFailure) in
                let answer = try client.send("DELETE", AdminClient.letterPath(id))
                guard answer.status == 204 || answer.status == 200 else { throw Self.failure(answer, id: id) }
                return "purged \(id)"
            }
        case .replayAll(let filters, let confirmed, let dryRun, let force):
            var matching = try client.listAll(filters, limit: nil).items
            // What the server's bulk replay takes (DeadLetterQuery.bulkReplayScope), so the
            // count confirmed is the count replayed: quarantined letters only by reason.
            if filters.reason == nil { matching.removeAll { $0["reason"]?.stringValue == "quarantined" } }
            guard try confirm(count: matching.count, verb: "replay", filters: filters, confirmed: confirmed, dryRun: dryRun) else {
                return dryRun || matching.isEmpty ? ExitCode.ok : ExitCode.usage
            }
            let body: JSONValue = ["destination": .string(filters.destination), "reason": .string(filters.reason), "force": .bool(force)]
            let answer = try client.send("POST", "/api/dead-letters/replay", json: body)
            guard answer.status == 200, let count = answer.json?["replayed"]?.int64Value else {
                throw .failure("replaying failed: \(answer.message)")
            }
            writeStandardOutput("replayed \(count) dead letter\(count == 1 ? "" : "s")")
            if let stale = answer.json?["stale"]?.int64Value, stale > 0 {
                writeStandardOutput("left \(stale) whose notification is stale (signed before the dedupe-window); "
                    + "add --force to replay \(stale == 1 ? "it" : "them") if the destination can tell")
            }
            return ExitCode.ok
        case .purgeAll(let filters, let olderThan, let confirmed, let dryRun):
            var matching = try client.listAll(filters, limit: nil).items
            if let olderThan {
                let cutoff = Timestamp.now().milliseconds - olderThan
                matching = matching.filter { record in
                    DeadLetterSummary(record: record).createdAt.map { $0.milliseconds < cutoff } ?? false
                }
            }
            guard try confirm(count: matching.count, verb: "purge", filters: filters, confirmed: confirmed, dryRun: dryRun) else {
                return dryRun || matching.isEmpty ? ExitCode.ok : ExitCode.usage
            }
            var purged = 0
            for record in matching {
                guard let id = record["id"]?.stringValue else { continue }
                let answer = try client.send("DELETE", AdminClient.letterPath(id))
                if answer.status == 204 { purged += 1 } else if answer.status != 404 {
                    throw .failure("purging \(id) failed after \(purged) purged: \(answer.message)")
                }
            }
            writeStandardOutput("purged \(purged) dead letter\(purged == 1 ? "" : "s")")
            return ExitCode.ok
        }
    }

    /// Prints what `--all` would touch; true when it should go ahead.
    private func confirm(count: Int, verb: String, filters: Filters, confirmed: Bool, dryRun: Bool) throws(AdminCommandFailure) -> Bool {
        var scope: [String] = []
        if let destination = filters.destination { scope.append("destination \(destination)") }
        if let reason = filters.reason { scope.append("reason \(reason)") }
        if case .replayAll(_, _, _, _) = self, filters.reason == nil { scope.append("quarantined ones left out") }
        if case .purgeAll(_, let age?, _, _) = self { scope.append("older than \(age / 1000)s") }
        let described = scope.isEmpty ? "" : " (" + scope.joined(separator: ", ") + ")"
        writeStandardOutput("\(count) dead letter\(count == 1 ? "" : "s") match\(count == 1 ? "es" : "")\(described)")
        guard count > 0, !dryRun else { return false }
        guard confirmed else {
            writeStandardError("storerelay dlq: add --yes to \(verb) \(count == 1 ? "it" : "these \(count)"), or --dry-run to only count")
            return false
        }
        return true
    }

    /// Runs `body` for every id, printing its line; a failure is reported and the rest go on.
    private func each(_ ids: [String], _ body: (String) throws(AdminCommandFailure) -> String) throws(AdminCommandFailure) -> Int32 {
        var failed = false
        for id in ids {
            do {
                writeStandardOutput(try body(id))
            } catch where error.exitCode == ExitCode.failure && !error.message.contains("admin listener at") {
                writeStandardError("storerelay dlq: \(error.message)")
                failed = true
            }
        }
        return failed ? ExitCode.failure : ExitCode.ok
    }

    private static func failure(_ answer: AdminClient.Answer, id: String) -> AdminCommandFailure {
        switch answer.status {
        case 404: .failure("there is no dead letter \(id)")
        case 400: .failure("'\(id)' is not a dead-letter id (expected dl- and 32 hex digits)")
        default: .failure("\(id): \(answer.message)")
        }
    }
}
