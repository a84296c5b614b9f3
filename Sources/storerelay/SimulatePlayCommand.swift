import Dispatch
import Foundation
import StoreRelayConfig
import StoreRelayCore
import StoreRelayNet
import StoreRelaySimulator

/// `storerelay simulate --store play`: a Google Play real-time developer notification as a
/// Pub/Sub push with authentication delivers it, signed with a dev key in DATA/dev-play/;
/// and `--serve-keys`, the key set a gateway's `google-certs-url` then points at.
enum SimulatePlayCommand {
    static let help = """
        Usage: storerelay simulate --store play --type T [--bundle PACKAGE]
                                   [--audience AUD] [--account EMAIL] [--product P]
                                   [--url URL | --out FILE] [--config FILE]
               storerelay simulate --store play --serve-keys ADDR [--config FILE]
               storerelay simulate --store play --list

        Builds a Google Play real-time developer notification of the given type and wraps it
        as Cloud Pub/Sub pushes it: {"message":{"attributes":{},"data":BASE64,"messageId":..,
        "publishTime":..},"subscription":"projects/../subscriptions/.."}, with an
        `Authorization: Bearer JWT` whose claims are iss https://accounts.google.com, aud,
        email, email_verified true, iat and exp, signed RS256 with a dev key kept in
        DATA/dev-play/ (key.pem, mode 0600; created on first use). Purchase tokens, order ids
        and message ids are random and shaped like Google's.

        The dev key is NOT Google's: a gateway accepts these pushes only when its
        google-certs-url serves the dev key set. --serve-keys ADDR serves it (plain HTTP, until
        interrupted) at http://ADDR/oauth2/v3/certs (any path answers); the file is also
        DATA/dev-play/certs.json. For example, with routes.conf holding
            google-certs-url http://127.0.0.1:8085/oauth2/v3/certs
            play com.acme.journal {
                push-audience http://127.0.0.1:8080/play/notifications
                push-account \(PlayPushRequest.defaultAccount)
            }
            path /play/notifications play
        run `storerelay simulate --store play --serve-keys 127.0.0.1:8085` beside
        `storerelay serve`, then
            storerelay simulate --store play --type SUBSCRIPTION_PURCHASED \\
                --url http://127.0.0.1:8080/play/notifications

        With --url, POSTs the push, prints the HTTP status and the gateway's answer, and exits
        0 on 2xx, else 1. With --out FILE (or - for stdout), or with neither, writes the saved
        push as an HTTP request without its request line:
            Authorization: Bearer JWT
            Content-Type: application/json
            (an empty line)
            {"message":{...},"subscription":"..."}    (the body exactly as posted)
        which `storerelay verify --keys DATA/dev-play/certs.json FILE` checks offline.

        Options:
          --type T         the notification's name: SUBSCRIPTION_RENEWED, ONE_TIME_PRODUCT_PURCHASED,
                           VOIDED_PURCHASE, TEST, ... (see --list)
          --bundle P       the app's package name (default \(PlayPushRequest.defaultPackage))
          --audience AUD   the token's aud, the push subscription's audience (default: --url;
                           required without it)
          --account EMAIL  the token's email, the push subscription's service account
                           (default \(PlayPushRequest.defaultAccount))
          --product P      for VOIDED_PURCHASE: subscription (default, productType 1) or
                           consumable (a one-time product, productType 2)
          --url URL        post to this http(s):// URL (the gateway's play path)
          --out FILE       write the saved push to FILE, or - for stdout
          --serve-keys A   serve the dev key set on HOST:PORT until interrupted
          --list           print every type, then exit
          --config FILE    the configuration, for its data directory (default: $STORERELAY_CONFIG,
                           ./routes.conf, or the embedded default)
        """

    static func run(_ arguments: [String]) -> Int32 {
        let parsed: ParsedArguments
        do {
            parsed = try ArgumentSpec(
                valueOptions: ["store", "type", "bundle", "audience", "account", "product", "url", "out", "serve-keys", "config"],
                flags: ["list"]
            ).parse(arguments)
        } catch {
            return usage(error.description)
        }
        if parsed.flag("list") {
            writeStandardOutput(PlayNotificationCatalog.listing)
            return ExitCode.ok
        }
        if let address = parsed.option("serve-keys") {
            let others = ["type", "bundle", "audience", "account", "product", "url", "out"].filter { parsed.option($0) != nil }
            guard others.isEmpty else { return usage("--serve-keys takes no --\(others[0])") }
            return serveKeys(address, config: parsed.option("config"))
        }
        guard let type = parsed.option("type") else {
            return usage("--type is required (see `storerelay simulate --store play --list`)")
        }
        guard PlayNotificationCatalog.lookup(type) != nil else {
            return usage("unknown Google Play notification type '\(type)' (see `storerelay simulate --store play --list`)")
        }
        var target: HTTPURL?
        if let url = parsed.option("url") {
            do {
                target = try NotificationPoster.target(url)
            } catch {
                return usage(error.message)
            }
        }
        if target != nil, parsed.option("out") != nil { return usage("give either --url or --out, not both") }
        guard let audience = parsed.option("audience") ?? parsed.option("url") else {
            return usage("--audience is required without --url (the push-audience of the gateway's play block)")
        }
        var request = PlayPushRequest(type: type, audience: audience)
        if let bundle = parsed.option("bundle") { request.packageName = bundle }
        if let account = parsed.option("account") { request.account = account }
        switch parsed.option("product") {
        case nil, "subscription": break
        case "consumable": request.voidedOneTimeProduct = true
        case let other?: return usage("--product must be subscription or consumable for Google Play, not '\(other)'")
        }

        let push: PlayPush
        do {
            let keys = try loadKeys(config: parsed.option("config"))
            push = try PlayPushFactory(key: keys).make(request)
        } catch let error as SimulatorError where error.isUsageError {
            return usage(error.message)
        } catch {
            return SimulateCommand.failure(error)
        }
        // As Apple's --out: a regular file is replaced whole, a FIFO or device written into.
        return SimulateCommand.deliver(body: push.httpBody, headers: [("Authorization", push.authorization)], to: target,
                                       printed: push.savedRequest, saved: push.savedRequest, out: parsed.option("out"),
                                       label: "\(type) \(push.messageId)")
    }

    private static func loadKeys(config: String?) throws -> PlayDevKey {
        let configuration = try ConfigurationLoader.load(option: config)
        let keys = try PlayDevKey.loadOrCreate(dataDirectory: configuration.dataDirectory)
        if keys.wasCreated {
            writeStandardError("created a dev Play key in \(keys.directory); a gateway trusts it only when google-certs-url serves \(keys.keySetPath) "
                + "(`storerelay simulate --store play --serve-keys 127.0.0.1:8085`)")
        }
        return keys
    }

    /// Serves the key set until SIGINT or SIGTERM.
    private static func serveKeys(_ address: String, config: String?) -> Int32 {
        let keys: PlayDevKey
        do {
            keys = try loadKeys(config: config)
        } catch {
            return SimulateCommand.failure(error)
        }
        let server = PlayKeyServer(keys: keys, address: address)
        let port: Int
        do {
            port = try server.start()
        } catch {
            writeStandardError("storerelay simulate: cannot serve the key set on \(address): \(error)")
            return ExitCode.failure
        }
        let host = address.split(separator: ":").dropLast().joined(separator: ":")
        writeStandardOutput("serving the dev key set (kid \(keys.kid)) at http://\(host.isEmpty ? "127.0.0.1" : host):\(port)\(PlayKeyServer.path)")
        let stopped = DispatchSemaphore(value: 0)
        ProcessSetup.handleSignals(logger: .disabled, stop: { stopped.signal() }, reload: {})
        stopped.wait()
        server.shutdown()
        return ExitCode.ok
    }

    private static func usage(_ message: String) -> Int32 { SimulateCommand.usage(message) }
}
