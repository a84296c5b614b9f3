import Foundation
import Testing
import StoreRelayCore
import StoreRelayTestSupport

/// The `storerelay` command line as a user runs it.
@Suite("Command line")
struct CommandLineTests {
    @Test func versionAndHelp() throws {
        let version = try CommandRunner.storerelay(["version"])
        #expect(version.status == 0)
        #expect(version.stdout.hasPrefix("storerelay "))
        let help = try CommandRunner.storerelay(["--help"])
        #expect(help.status == 0)
        for command in ["serve", "check", "verify", "version"] {
            #expect(help.stdout.contains(command))
            let commandHelp = try CommandRunner.storerelay([command, "--help"])
            #expect(commandHelp.status == 0, "\(command) --help")
            #expect(commandHelp.stdout.contains("Usage: storerelay \(command)"))
        }
    }

    @Test func usageErrorsExitTwo() throws {
        for arguments in [[], ["frobnicate"], ["check", "--bogus"], ["verify", "a", "b"], ["serve", "--config"]] {
            let result = try CommandRunner.storerelay(arguments)
            #expect(result.status == 2, "\(arguments)")
            #expect(!result.stderr.isEmpty)
        }
    }

    /// A directory whose routes.conf trusts the shared test CA (`--config` names it).
    private func trustingDirectory() throws -> (directory: URL, config: String) {
        let directory = try Gateway.trustingDirectory("storerelay-verify")
        let config = directory.appendingPathComponent("routes.conf")
        try Gateway.trustingConfig().write(to: config, atomically: true, encoding: .utf8)
        return (directory, config.path)
    }

    @Test func verifyPrintsTheNormalizedEvent() throws {
        let (directory, config) = try trustingDirectory()
        let uuid = UUID().uuidString.lowercased()
        // Signed with the openssl command line, not with StoreRelay's own signer.
        let jws = try TestChainTests.notification(uuid: uuid, ca: testSigner.authority, variant: .valid, environment: "Sandbox")
        let file = directory.appendingPathComponent("body.json")
        try appleBody(signedPayload: jws).write(to: file, atomically: true, encoding: .utf8)
        let result = try CommandRunner.storerelay(["verify", "--config", config, file.path], directory: directory)
        #expect(result.status == 0, "\(result.stderr)")
        let event = try JSONValue.parse(result.stdout)
        #expect(event["id"]?.stringValue == uuid)
        #expect(event["type"]?.stringValue == "SUBSCRIBED")
        #expect(event["subtype"]?.stringValue == "INITIAL_BUY")
        #expect(event["environment"]?.stringValue == "sandbox")
        #expect(event["app"]?["bundleId"]?.stringValue == "com.acme.journal")

        // The same body on standard input, and a bare JWS.
        let stdin = try CommandRunner.storerelay(["verify", "--config", config, "-"], stdin: Array(appleBody(signedPayload: jws).utf8),
                                                 directory: directory)
        #expect(stdin.status == 0)
        var fromStdin = try JSONValue.parse(stdin.stdout).objectValue
        var fromFile = event.objectValue
        fromStdin?["receivedAt"] = nil
        fromFile?["receivedAt"] = nil
        #expect(fromStdin == fromFile)
        let bare = try CommandRunner.storerelay(["verify", "--config", config, "-"], stdin: Array((jws + "\n").utf8),
                                                directory: directory)
        #expect(bare.status == 0)
        #expect(try JSONValue.parse(bare.stdout)["id"] == event["id"])
        // Without the trust-root line the same notification is not trusted.
        let plainConfig = directory.appendingPathComponent("plain.conf")
        try Gateway.config().write(to: plainConfig, atomically: true, encoding: .utf8)
        let plain = try CommandRunner.storerelay(["verify", "--config", plainConfig.path, "-"], stdin: Array((jws + "\n").utf8),
                                                 directory: directory)
        #expect(plain.status == 1)
        #expect(plain.stderr.lowercased().contains("signature"))
    }

    @Test func verifyRejectsWithAReason() throws {
        let (directory, config) = try trustingDirectory()
        let genuine = try TestChainTests.notification(uuid: UUID().uuidString.lowercased(), ca: testSigner.authority, variant: .valid)
        let result = try CommandRunner.storerelay(["verify", "--config", config, "-"],
                                                  stdin: Array(appleBody(signedPayload: try tampered(genuine)).utf8), directory: directory)
        #expect(result.status == 1)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.lowercased().contains("signature"))
        let garbage = try CommandRunner.storerelay(["verify", "--config", config, "-"], stdin: Array("hello".utf8), directory: directory)
        #expect(garbage.status == 1)
        let missing = try CommandRunner.storerelay(["verify", "--config", config, "/nonexistent/body.json"], directory: directory)
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("/nonexistent/body.json"))
    }

    @Test func checkPrintsTheRouteTableOrTheErrors() throws {
        let directory = try TestPaths.makeTemporaryDirectory()
        let config = directory.appendingPathComponent("routes.conf")
        try """
            listen 127.0.0.1:8080
            app com.acme.journal {
                apple-id 1234567890
            }
            destination ledger file ./data/queues/ledger
            destination refunds file ./data/queues/refunds
            route production * REFUND,REVOKE -> refunds
            route * * * -> ledger
            """.write(to: config, atomically: true, encoding: .utf8)
        let ok = try CommandRunner.storerelay(["check", "--config", config.path])
        #expect(ok.status == 0, "\(ok.stderr)")
        #expect(ok.stdout.contains("REFUND"))
        #expect(ok.stdout.contains("refunds"))
        #expect(ok.stdout.contains("ledger"))
        #expect(!ok.stderr.contains("warning"))

        // A route no notification can match is valid, and warned about.
        try """
            listen 127.0.0.1:8080
            environments sandbox
            app com.acme.journal
            destination ledger file ./data/queues/ledger
            route * * MIGRATE -> ledger
            """.write(to: config, atomically: true, encoding: .utf8)
        let warned = try CommandRunner.storerelay(["check", "--config", config.path])
        #expect(warned.status == 0, "\(warned.stderr)")
        #expect(warned.stderr.hasPrefix("warning: ") && warned.stderr.contains("routes.conf:5: route type MIGRATE")
                && warned.stderr.contains("MIGRATION"), "\(warned.stderr)")

        try """
            listen 127.0.0.1:8080
            route * * * -> nowhere
            retries 5
            """.write(to: config, atomically: true, encoding: .utf8)
        let bad = try CommandRunner.storerelay(["check", "--config", config.path])
        #expect(bad.status == 1)
        #expect(bad.stderr.contains("routes.conf:2:"))
        #expect(bad.stderr.contains("routes.conf:3:1"))

        // STORERELAY_CONFIG names the file when --config is absent.
        var environment = ProcessInfo.processInfo.environment
        environment["STORERELAY_CONFIG"] = config.path
        let fromEnvironment = try CommandRunner.storerelay(["check"], environment: environment, directory: directory)
        #expect(fromEnvironment.status == 1)
        let missing = try CommandRunner.storerelay(["check", "--config", "/nonexistent.conf"])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("/nonexistent.conf"))
    }

    /// With no file, `check` and `serve` use the embedded default configuration, which is the
    /// repository's own routes.conf.
    @Test func embeddedDefaultIsTheRepositoryRoutesConf() throws {
        let directory = try TestPaths.makeTemporaryDirectory()
        let embedded = try CommandRunner.storerelay(["check"], directory: directory)
        #expect(embedded.status == 0, "\(embedded.stderr)")
        let repository = try CommandRunner.storerelay(
            ["check", "--config", TestPaths.packageRoot.appendingPathComponent("routes.conf").path], directory: directory)
        #expect(repository.status == 0)
        // Everything but the first line, which names the file, is the same.
        #expect(embedded.stdout.split(separator: "\n").dropFirst() == repository.stdout.split(separator: "\n").dropFirst())
        #expect(embedded.stdout.contains("./data/queues"))
    }
}
