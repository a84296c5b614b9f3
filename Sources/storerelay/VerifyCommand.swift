import Foundation
import StoreRelayConfig
import StoreRelayGateway
import StoreRelayCore

/// `storerelay verify`: verifies one saved notification body offline, as the gateway would.
enum VerifyCommand: CommandDescribing {
    static let name = "verify"
    static let summary = "verify a saved notification body offline and print its normalized event"
    static let help = """
        Usage: storerelay verify [--config FILE] [FILE|-]
               storerelay verify [--config FILE] [--authorization 'Bearer JWT'] [--keys JWKS-FILE]
                                 [--at TIME] [FILE|-]

        Verifies one notification body exactly as the gateway would (signature, certificate
        chain to a trusted root, Apple's marker OIDs, V1 shared secret) and prints the
        normalized event JSON on stdout. FILE holds the HTTP body Apple posts
        ({"signedPayload":"..."} or a V1 JSON body) or a bare JWS; `-` or no FILE reads stdin.
        Trust roots, apps, secrets and environments come from the configuration.
        A valid notification that the configuration would quarantine is printed too, with
        the reason on stderr.

        A Google Play push is verified as a `play` path would: give its bearer header with
        --authorization, or save the push as an HTTP request (an optional `POST` line, header
        lines including `Authorization: Bearer ...`, an empty line, then the body). The token
        is checked against --keys (a JWKS document) or, without it, the keys fetched once from
        google-certs-url (Google's by default), at the current time or --at TIME (RFC 3339:
        push tokens expire after an hour, so a saved push is checked as of when it came).

        Exit status: 0 valid, 1 invalid (the reason on stderr), 2 usage.

        Options:
          --config FILE   the configuration (default: $STORERELAY_CONFIG, ./routes.conf, or
                          the embedded default)
          --authorization VALUE   a Google Play push's Authorization header ('Bearer <JWT>')
          --keys FILE     Google's key set (JWKS) to check a push token against
          --at TIME       check a push token as of TIME (e.g. 2026-11-20T10:15:30Z)
        """

    static func run(_ arguments: [String]) -> Int32 {
        let parsed: ParsedArguments
        do {
            parsed = try ArgumentSpec(valueOptions: ["config", "authorization", "keys", "at"], maxPositionals: 1).parse(arguments)
        } catch {
            writeStandardError("storerelay verify: \(error)")
            return ExitCode.usage
        }
        let body: [UInt8]
        let source = parsed.positionals.first ?? "-"
        if source == "-" {
            body = readStandardInput()
        } else {
            do {
                body = Array(try Data(contentsOf: URL(fileURLWithPath: source)))
            } catch {
                writeStandardError("storerelay verify: cannot read \(source)")
                return ExitCode.failure
            }
        }
        var clock: any TimeSource = WallClock()
        if let text = parsed.option("at") {
            guard let at = Timestamp(iso8601: text) else {
                writeStandardError("storerelay verify: --at \(text) is not a time (expected RFC 3339, e.g. 2026-11-20T10:15:30Z)")
                return ExitCode.usage
            }
            clock = FixedTime(at)
        }
        var push: OfflineVerification.SavedPush?
        if let authorization = parsed.option("authorization") {
            push = OfflineVerification.SavedPush(authorization: authorization, body: body)
        } else if let saved = OfflineVerification.SavedPush.parseHTTP(body), saved.authorization != nil {
            push = saved
        } else if OfflineVerification.looksLikePlayPush(body) {
            writeStandardError("invalid: a Google Play push is verified with its Authorization header: "
                + "give it with --authorization 'Bearer <JWT>', or save the push as an HTTP request")
            return ExitCode.failure
        }
        do {
            let configuration = try ConfigurationLoader.load(option: parsed.option("config"))
            if let push {
                return verifyPlay(push, configuration: configuration, keysFile: parsed.option("keys"), clock: clock)
            }
            let verdict = try OfflineVerification.verify(body: body, configuration: configuration, clock: clock)
            if let quarantine = verdict.quarantineReason {
                writeStandardError("valid, but the gateway would quarantine it: \(quarantine)")
            }
            writeStandardOutput(verdict.eventJSON)
            return ExitCode.ok
        } catch let error as ConfigurationLoader.Failure {
            writeStandardError(error.description)
            return ExitCode.failure
        } catch {
            writeStandardError("invalid: \(error)")
            return ExitCode.failure
        }
    }

    private static func verifyPlay(
        _ push: OfflineVerification.SavedPush, configuration: GatewayConfiguration, keysFile: String?, clock: any TimeSource
    ) -> Int32 {
        let document: [UInt8]
        if let keysFile {
            guard let data = try? Data(contentsOf: URL(fileURLWithPath: keysFile)) else {
                writeStandardError("storerelay verify: cannot read \(keysFile)")
                return ExitCode.failure
            }
            document = Array(data)
        } else {
            let fetched = Blocking.wait { done in OfflineVerification.fetchGoogleKeys(configuration: configuration, completion: done) }
            switch fetched {
            case .success(let bytes): document = bytes
            case .failure(let error):
                writeStandardError("invalid: cannot check the token without Google's keys: \(error.message) (give them with --keys FILE)")
                return ExitCode.failure
            }
        }
        do {
            let verdict = try OfflineVerification.verifyPlay(push, keySetDocument: document, configuration: configuration, clock: clock)
            if let quarantine = verdict.quarantineReason {
                writeStandardError("valid, but the gateway would quarantine it: \(quarantine)")
            }
            writeStandardOutput(verdict.eventJSON)
            return ExitCode.ok
        } catch {
            writeStandardError("invalid: \(error)")
            return ExitCode.failure
        }
    }
}

/// `--at`: the time a saved push is checked as of.
private struct FixedTime: TimeSource {
    let time: Timestamp
    init(_ time: Timestamp) { self.time = time }
    func now() -> Timestamp { time }
}
