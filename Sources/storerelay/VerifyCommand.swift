import Foundation
import StoreRelayConfig
import StoreRelayGateway

/// `storerelay verify`: verifies one saved notification body offline, as the gateway would.
enum VerifyCommand: CommandDescribing {
    static let name = "verify"
    static let summary = "verify a saved notification body offline and print its normalized event"
    static let help = """
        Usage: storerelay verify [--config FILE] [FILE|-]

        Verifies one notification body as the gateway would (signature, certificate chain
        to a trusted root, Apple's marker OIDs, V1 shared secret), and each nested signed
        value on its own too, whatever verify-nested says, and prints the
        normalized event JSON on stdout. FILE holds the HTTP body Apple posts
        ({"signedPayload":"..."} or a V1 JSON body) or a bare JWS; `-` or no FILE reads stdin.
        Trust roots, apps, secrets and environments come from the configuration.
        A valid notification that the configuration would quarantine is printed too, with
        the reason on stderr.

        Exit status: 0 valid, 1 invalid (the reason on stderr), 2 usage.

        Options:
          --config FILE   the configuration (default: $STORERELAY_CONFIG, ./routes.conf, or
                          the embedded default)
        """

    static func run(_ arguments: [String]) -> Int32 {
        let parsed: ParsedArguments
        do {
            parsed = try ArgumentSpec(valueOptions: ["config"], maxPositionals: 1).parse(arguments)
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
        do {
            let configuration = try ConfigurationLoader.load(option: parsed.option("config"))
            let verdict = try OfflineVerification.verify(body: body, configuration: configuration)
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
}
