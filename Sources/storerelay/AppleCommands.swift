import StoreRelayConfig
import StoreRelayCore

/// `storerelay reconcile`: one pass with Apple's Notification History, run by the gateway.
///
/// The running gateway does the work, asked through its admin listener: it owns the journal
/// (a second process writing it would corrupt dedupe and recovery), holds the API keys, and
/// records the pass in its status and metrics like a scheduled one.
enum ReconcileCommand: CommandDescribing {
    static let name = "reconcile"
    static let summary = "recover what Apple failed to deliver, from its Notification History, now"
    static let help = """
        Usage: storerelay reconcile --app BUNDLE --env production|sandbox [--since 48h]
                                    [--only-failures] [--dry-run] [--admin URL] [--token T]
                                    [--config FILE]

        Asks the running gateway to fetch the app's Notification History from Apple and pass
        every notification through its normal acceptance path: what it already has is a
        duplicate, what it missed is stored and fanned out with "recoveredBy":"history".
        Prints what it found: already had, recovered, quarantined, failed to verify.

        Options:
          --app BUNDLE       the app's bundle id (its app block needs an api-key line)
          --env E            production or sandbox
          --since D          how far back to look (e.g. 48h, 7d); default: from the last
                             checkpoint minus the overlap
          --only-failures    only notifications Apple failed to deliver
          --dry-run          fetch and judge, store nothing, keep the checkpoint
          --admin, --token, --config   reach the gateway as `storerelay dlq` does

        Exit status: 0 done, 1 failure (Apple refused, gateway unreachable), 2 usage.
        """

    static let spec = ArgumentSpec(valueOptions: ["app", "env", "since", "admin", "token", "config"],
                                   flags: ["only-failures", "dry-run"], maxPositionals: 0)

    static func run(_ arguments: [String]) -> Int32 {
        AppleCommand.run(name, arguments, spec: spec) { parsed, target, client throws(AdminCommandFailure) in
            var body = target.body
            if let since = parsed.option("since") {
                guard let duration = Duration(compact: since), duration > .zero else {
                    throw .usage("--since takes a duration such as 48h or 7d, not '\(since)'")
                }
                body.append(("since", .string(ConfigFormat.duration(duration))))
            }
            body.append(("onlyFailures", .bool(parsed.flag("only-failures"))))
            body.append(("dryRun", .bool(parsed.flag("dry-run"))))
            // A pass over 180 days may take long; Apple's answers pace it, not the gateway.
            let answer = try client.send("POST", "/api/reconcile", json: .object(JSONObject(body)), timeout: .seconds(3600))
            guard answer.status == 200, let report = answer.json else { throw .failure(answer.message) }
            let number = { (key: String) in report[key]?.int64Value ?? 0 }
            var lines = [
                "\(target.app) \(target.environment): \(report["dryRun"]?.boolValue == true ? "dry run, " : "")"
                    + "window \(report["windowStart"]?.stringValue ?? "?") to \(report["windowEnd"]?.stringValue ?? "?")",
                "found \(number("found")), already had \(number("alreadyHad")), recovered \(number("recovered")), "
                    + "quarantined \(number("quarantined")), failed \(number("failed")) (\(number("pages")) pages)",
            ]
            if let clamped = report["clamped"]?.stringValue { lines.append("window shortened: \(clamped)") }
            let restarts = number("restarts")
            if restarts > 0 {
                lines.append("window fetched again \(restarts) time\(restarts == 1 ? "" : "s") (Apple's pagination token expired; repeats count as already had)")
            }
            writeStandardOutput(lines.joined(separator: "\n"))
            guard report["outcome"]?.stringValue == "success" else {
                throw .failure("reconciliation failed: \(report["error"]?.stringValue ?? "unknown error")")
            }
            return ExitCode.ok
        }
    }
}

/// `storerelay probe`: proves the pipe from Apple to this gateway with a TEST notification.
enum ProbeCommand: CommandDescribing {
    static let name = "probe"
    static let summary = "ask Apple for a TEST notification and time its arrival here"
    static let help = """
        Usage: storerelay probe --app BUNDLE --env sandbox|production [--timeout 60s]
                                [--admin URL] [--token T] [--config FILE]

        Asks the running gateway to request a TEST notification from Apple for the app, wait
        until that notification has been accepted by this gateway, and report the round trip
        and Apple's own send attempts. Apple limits test requests to one a second.

        Options:
          --app BUNDLE       the app's bundle id (its app block needs an api-key line)
          --env E            sandbox or production
          --timeout D        how long to wait for the notification (default 60s, at most 10m)
          --admin, --token, --config   reach the gateway as `storerelay dlq` does

        Exit status: 0 the notification arrived, 1 it did not (or Apple refused), 2 usage.
        """

    static let spec = ArgumentSpec(valueOptions: ["app", "env", "timeout", "admin", "token", "config"], flags: [], maxPositionals: 0)

    static func run(_ arguments: [String]) -> Int32 {
        AppleCommand.run(name, arguments, spec: spec) { parsed, target, client throws(AdminCommandFailure) in
            var body = target.body
            var wait = Duration.seconds(60)
            if let timeout = parsed.option("timeout") {
                guard let duration = Duration(compact: timeout), duration >= .seconds(1), duration <= .seconds(600) else {
                    throw .usage("--timeout takes a duration from 1s to 10m, such as 60s, not '\(timeout)'")
                }
                wait = duration
                body.append(("timeout", .string(ConfigFormat.duration(duration))))
            }
            let answer = try client.send("POST", "/api/probe", json: .object(JSONObject(body)), timeout: wait + .seconds(60))
            guard answer.status == 200, let report = answer.json else { throw .failure(answer.message) }
            var lines: [String] = []
            let outcome = report["outcome"]?.stringValue ?? "failed"
            if outcome == "arrived" {
                lines.append("arrived: \(report["notificationUUID"]?.stringValue ?? "?") in \(report["roundTripMs"]?.int64Value ?? 0) ms")
            } else {
                lines.append("\(outcome): \(report["error"]?.stringValue ?? "no detail")")
            }
            for attempt in report["sendAttempts"]?.arrayValue ?? [] {
                lines.append("  Apple's attempt \(attempt["attemptDate"]?.stringValue ?? "?"): \(attempt["sendAttemptResult"]?.stringValue ?? "?")")
            }
            writeStandardOutput(lines.joined(separator: "\n"))
            return outcome == "arrived" ? ExitCode.ok : ExitCode.failure
        }
    }
}

/// What `reconcile` and `probe` share: `--app` and `--env`, and a client for the gateway.
private enum AppleCommand {
    struct Target {
        let app: String
        let environment: String
        var body: [JSONObject.Member] { [("app", .string(app)), ("environment", .string(environment))] }
    }

    static func run(
        _ name: String, _ arguments: [String], spec: ArgumentSpec,
        _ body: (ParsedArguments, Target, AdminClient) throws(AdminCommandFailure) -> Int32
    ) -> Int32 {
        do throws(AdminCommandFailure) {
            let parsed: ParsedArguments
            do {
                parsed = try spec.parse(arguments)
            } catch {
                throw AdminCommandFailure.usage(error.description)
            }
            guard let app = parsed.option("app"), !app.isEmpty else { throw AdminCommandFailure.usage("--app BUNDLE is required") }
            guard let environment = parsed.option("env"), environment == "production" || environment == "sandbox" else {
                throw AdminCommandFailure.usage("--env must be production or sandbox")
            }
            let client = try AdminClient.connect(parsed)
            defer { client.shutdown() }
            return try body(parsed, Target(app: app, environment: environment), client)
        } catch {
            writeStandardError("storerelay \(name): \(error.message)")
            return error.exitCode
        }
    }
}
