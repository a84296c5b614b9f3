import Foundation
import StoreRelayConfig
import StoreRelayNet
import StoreRelaySimulator
import StoreRelayCore

/// `storerelay simulate`: signs a realistic V2 notification with the local dev CA and posts
/// it to a gateway, saves it, or prints it.
enum SimulateCommand: CommandDescribing {
    static let name = "simulate"
    static let summary = "sign a realistic V2 notification (or, with --store play, a Google Play push) and POST or save it"
    static let help = """
        Usage: storerelay simulate --type T [--subtype S] [--env sandbox|production]
                                   [--bundle ID] [--apple-id N]
                                   [--product subscription|consumable|commitment]
                                   [--url URL | --out FILE] [--config FILE]
               storerelay simulate --list
               storerelay simulate --store play ...   (Google Play: see --store play --help)

        Builds an App Store Server Notification V2 of the given type and subtype, with nested
        signed transaction and renewal info consistent with it, and signs it with a dev
        certificate authority kept in DATA/dev-ca/ (created on first use; DATA is the
        configuration's `data` directory). The chain looks like Apple's (marker OIDs included)
        but is NOT Apple's: a gateway accepts these notifications only when its configuration
        says `trust-root DATA/dev-ca/root.pem sandbox` (the embedded default does), and then
        sandbox ones only; `--env production` needs the line without `sandbox`, for tests.

        With --url, POSTs the body as Apple does, prints the HTTP status and the gateway's
        answer, and exits 0 on 2xx, else 1. With --out FILE (or - for stdout), writes the
        body {"signedPayload":"..."} there. With neither, prints the body.

        Options:
          --type T         the notificationType, e.g. DID_RENEW (see --list)
          --subtype S      its subtype, e.g. BILLING_RECOVERY (required when the type has no
                           plain form)
          --env E          sandbox (default) or production
          --bundle ID      the app's bundle id (default \(NotificationRequest.defaultBundleId))
          --apple-id N     the app's Apple ID, appAppleId (default \(NotificationRequest.defaultAppAppleId))
          --product P      subscription (default), consumable or commitment: a
                           consumable's CONSUMPTION_REQUEST, REFUND, REFUND_DECLINED or
                           REFUND_REVERSED carries no renewal info and no status; a
                           commitment is a monthly plan committed for 12 months
                           (billingPlanType, commitmentInfo)
          --url URL        post to this http:// URL (the gateway's notification path)
          --out FILE       write the body to FILE, or - for stdout
          --list           print every type and its subtypes, then exit
          --config FILE    the configuration (default: $STORERELAY_CONFIG, ./routes.conf, or
                           the embedded default)
          --store S        apple (default) or play: Google Play real-time developer
                           notifications as Pub/Sub pushes them, signed with a dev key

        """ + "\n" + SimulatePlayCommand.help

    static func run(_ arguments: [String]) -> Int32 {
        switch storeOption(arguments) {
        case nil, "apple": break
        case "play": return SimulatePlayCommand.run(arguments)
        case let other?: return usage("--store must be apple or play, not '\(other)'")
        }
        let parsed: ParsedArguments
        do {
            parsed = try ArgumentSpec(
                valueOptions: ["store", "type", "subtype", "env", "bundle", "apple-id", "product", "url", "out", "config"],
                flags: ["list"]
            ).parse(arguments)
        } catch {
            return usage(error.description)
        }
        if parsed.flag("list") {
            writeStandardOutput(NotificationCatalog.listing)
            return ExitCode.ok
        }
        let request: NotificationRequest
        var target: HTTPURL?
        do {
            request = try makeRequest(parsed)
            try request.validate()
            if let url = parsed.option("url") { target = try NotificationPoster.target(url) }
        } catch let error as UsageError {
            return usage(error.description)
        } catch let error as SimulatorError {
            return usage(error.message)
        } catch {
            return usage("\(error)")
        }
        if target != nil, parsed.option("out") != nil {
            return usage("give either --url or --out, not both")
        }

        let notification: SimulatedNotification
        let authority: DevCertificateAuthority
        do {
            let configuration = try ConfigurationLoader.load(option: parsed.option("config"))
            authority = try DevCertificateAuthority.loadOrCreate(dataDirectory: configuration.dataDirectory)
            notification = try NotificationFactory(authority: authority).make(request)
        } catch {
            return failure(error)
        }
        if authority.wasCreated {
            writeStandardError("created a dev CA in \(authority.directory); a gateway trusts it only with `trust-root \(authority.rootPath) sandbox`")
        }
        return deliver(body: notification.httpBody, to: target, printed: notification.httpBody, saved: notification.httpBody + "\n",
                       out: parsed.option("out"),
                       label: "\(notification.payload["notificationType"]?.stringValue ?? "notification") \(notification.notificationUUID)")
    }

    private static func makeRequest(_ parsed: ParsedArguments) throws -> NotificationRequest {
        guard let type = parsed.option("type") else {
            throw UsageError("--type is required (see `storerelay simulate --list`)")
        }
        var request = NotificationRequest(type: type, subtype: parsed.option("subtype"))
        if let env = parsed.option("env") {
            guard let environment = AppStoreEnvironment(appleName: env), environment == .sandbox || environment == .production else {
                throw UsageError("--env must be sandbox or production, not '\(env)'")
            }
            request.environment = environment
        }
        if let bundle = parsed.option("bundle") { request.bundleId = bundle }
        if let appleId = parsed.option("apple-id") {
            guard let value = Int64(appleId), value > 0 else {
                throw UsageError("--apple-id must be a positive number, not '\(appleId)'")
            }
            request.appAppleId = value
        }
        if let product = parsed.option("product") {
            guard let value = NotificationRequest.Product(rawValue: product) else {
                throw UsageError("--product must be subscription, consumable or commitment, not '\(product)'")
            }
            request.product = value
        }
        return request
    }

    /// What both stores do with what they built: POST `body` (with `headers`) to `target` and
    /// print the answer; or print `printed` (no `--out`, or `-`); or write `saved` to `out`
    /// and say so, naming it by `label`.
    static func deliver(body: String, headers: [(String, String)] = [], to target: HTTPURL?, printed: String, saved: String,
                        out: String?, label: String) -> Int32 {
        if let target {
            do {
                let answer = try Blocking.wait(for: { NotificationPoster().post(body, to: target, headers: headers, completion: $0) }).get()
                writeStandardOutput("HTTP \(answer.status) \(answer.reason)")
                if !answer.body.isEmpty { writeStandardOutput(answer.body) }
                return answer.isSuccess ? ExitCode.ok : ExitCode.failure
            } catch {
                writeStandardError("storerelay simulate: \(error.message)")
                return ExitCode.failure
            }
        }
        guard let out, out != "-" else {
            writeStandardOutput(printed)
            return ExitCode.ok
        }
        do {
            try write(Data(saved.utf8), to: out)
        } catch {
            writeStandardError("storerelay simulate: cannot write \(out): \(error.localizedDescription)")
            return ExitCode.failure
        }
        writeStandardError("wrote \(label) to \(out)")
        return ExitCode.ok
    }

    /// A configuration that cannot be loaded, or anything else that stops a simulation
    /// before it is built: said on standard error, exit status 1.
    static func failure(_ error: any Error) -> Int32 {
        let text = (error as? ConfigurationLoader.Failure)?.description ?? "\(error)"
        writeStandardError("storerelay simulate: \(text)")
        return ExitCode.failure
    }

    /// A regular file (or a new one) is replaced whole, so nobody reads half a body. Anything
    /// else that exists — `/dev/null`, a FIFO, a terminal — is written into: replacing it
    /// would rename a regular file over it (run as root, over `/dev/null` itself).
    static func write(_ bytes: Data, to path: String) throws {
        var info = stat()
        // `stat`, not `lstat`: /dev/stdout is a link to whatever standard output is.
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) != S_IFREG else {
            return try bytes.write(to: URL(fileURLWithPath: path), options: .atomic)
        }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        try handle.write(contentsOf: bytes)
    }

    /// The value of `--store` (`--store play` or `--store=play`), before the options of
    /// either store are parsed.
    private static func storeOption(_ arguments: [String]) -> String? {
        for (index, argument) in arguments.enumerated() {
            if argument == "--" { return nil }
            if argument.hasPrefix("--store=") { return String(argument.dropFirst("--store=".count)) }
            if argument == "--store" { return index + 1 < arguments.count ? arguments[index + 1] : "" }
        }
        return nil
    }

    static func usage(_ message: String) -> Int32 {
        writeStandardError("storerelay simulate: \(message)")
        return ExitCode.usage
    }
}
