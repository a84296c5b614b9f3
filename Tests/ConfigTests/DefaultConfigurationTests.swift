import Foundation
import Testing
import StoreRelayCore
@testable import StoreRelayConfig

/// The embedded default is the repository's routes.conf, byte for byte, and it works alone.
@Suite struct DefaultConfigurationTests {
    @Test func embeddedTextEqualsTopLevelRoutesConf() throws {
        let url = packageRoot().appendingPathComponent("routes.conf")
        let file = try Data(contentsOf: url)
        let fileBytes = [UInt8](file)
        let embedded = Array(DefaultConfiguration.text.utf8)
        let firstDifference = zip(fileBytes, embedded).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(fileBytes.count, embedded.count)
        let same = fileBytes == embedded
        #expect(same, "routes.conf (\(fileBytes.count) bytes) and DefaultConfiguration.text (\(embedded.count) bytes) differ from byte \(firstDifference): paste the file into DefaultConfiguration.swift")
    }

    @Test func topLevelRoutesConfLoadsCleanly() throws {
        let path = packageRoot().appendingPathComponent("routes.conf").path
        let c = try GatewayConfiguration.load(path: path, environment: [:])
        #expect(c.sourceFile == path)
        #expect(c.checkReport().hasPrefix("Configuration \(path): OK"))
    }

    @Test func defaultAcceptsEveryAppAndQueuesEverythingToFiles() throws {
        let c = DefaultConfiguration.configuration()
        #expect(c.listen.description == "0.0.0.0:8080")
        #expect(c.paths == [NotificationPath(path: "/appstore/notifications")])
        #expect(c.admin.description == "127.0.0.1:9090")
        #expect(c.adminToken == nil)
        #expect(c.dataDirectory == "./data")
        #expect(c.environments == [.production, .sandbox])
        #expect(c.apps.isEmpty)
        #expect(c.tls == nil)
        for destination in c.destinations {
            guard case .file(let options) = destination.kind else {
                Issue.record("\(destination.name) is not a file queue")
                continue
            }
            #expect(options.directory.hasPrefix("./data/queues/"))
        }
        #expect(try fileQueue(c, "production").directory == "./data/queues/production")
        #expect(try fileQueue(c, "sandbox").directory == "./data/queues/sandbox")
        for environment in c.environments {
            for type in ["TEST", "DID_RENEW", "SOME_FUTURE_TYPE"] {
                let routed = c.routes.destinations(environment: environment, bundleId: "com.any.app", type: type, subtype: "X")
                #expect(routed == [environment.rawValue])
            }
        }
    }

    /// The default trusts the simulator's dev CA for sandbox only, so a first run reaches 200
    /// without an edit while nobody holding the dev CA's key can sign production
    /// notifications; `check` does not fail on it before `serve` has created it.
    @Test func defaultTrustsTheDevCAForSandboxOnly() {
        let c = DefaultConfiguration.configuration()
        #expect(c.trustRoots == [TrustRoot(path: "./data/dev-ca/root.pem", environments: [.sandbox])])
        #expect(c.trustRoots[0].isProvisionedDevCA(dataDirectory: c.dataDirectory))
        #expect(!c.warnings.contains { $0.hasPrefix("trust-root") })
        #expect(c.referencedFiles.map(\.createdAtStart) == [true])
        #expect(c.unreadableFiles().isEmpty)
        // Trusted for production too, or outside the data directory: never created.
        #expect(!TrustRoot(path: "./data/dev-ca/root.pem").isProvisionedDevCA(dataDirectory: "./data"))
        #expect(!TrustRoot(path: "./data/dev-ca/root.pem", environments: [.sandbox, .production]).isProvisionedDevCA(dataDirectory: "./data"))
        #expect(!TrustRoot(path: "./elsewhere/root.pem", environments: [.sandbox]).isProvisionedDevCA(dataDirectory: "./data"))
        #expect(TrustRoot(path: "data/../data/dev-ca/root.pem", environments: [.sandbox]).isProvisionedDevCA(dataDirectory: "data/"))
    }

    @Test func defaultParsesWithoutAnyEnvironmentVariable() {
        #expect(errors(DefaultConfiguration.text, environment: [:]).isEmpty)
    }
}
