import Foundation
import Testing
import StoreRelayTestSupport
@testable import StoreRelayConfig

/// Every file the configuration names is read by `check` as `serve` would read it (issue 25,
/// point 3): a missing or unreadable `trust-root`, `tls`, `ca-file` or `api-key` fails the
/// check with its absolute path, rather than the start. Private keys others can read, and
/// Apple API tokens over plaintext to another host, are warned about (point 8).
@Suite struct ReferencedFileTests {
    /// A configuration naming one file of each kind, all under `directory`.
    static func configuration(in directory: URL) throws -> GatewayConfiguration {
        try parsed("""
            data \(directory.path)/data
            tls \(directory.path)/cert.pem \(directory.path)/key.pem
            trust-root \(directory.path)/root.pem sandbox
            apple-api-url https://127.0.0.1:9443 ca-file \(directory.path)/api-ca.pem
            app com.acme.journal {
                api-key \(directory.path)/key.p8 ABC123DEFG 57246542-96fe-1a63-e053-0824d011072a
            }
            destination billing webhook https://billing.example/hook {
                ca-file \(directory.path)/billing-ca.pem
            }
            route * * * -> billing
            """)
    }

    static let names = ["cert.pem", "key.pem", "root.pem", "key.p8", "api-ca.pem", "billing-ca.pem"]

    @Test func everyNamedFileIsListedAbsolute() throws {
        let directory = try TestPaths.makeTemporaryDirectory("referenced")
        let files = try Self.configuration(in: directory).referencedFiles
        #expect(files.map(\.directive) == ["tls", "tls", "trust-root", "app com.acme.journal api-key",
                                           "apple-api-url ca-file", "destination billing ca-file"])
        #expect(files.map(\.isPrivateKey) == [false, true, false, true, false, false])
        #expect(Set(files.map { URL(fileURLWithPath: $0.absolutePath).lastPathComponent }) == Set(Self.names))
        #expect(files.allSatisfy { $0.absolutePath.hasPrefix("/") })
    }

    @Test func missingAndUnreadableFilesAreNamed() throws {
        let directory = try TestPaths.makeTemporaryDirectory("referenced")
        let configuration = try Self.configuration(in: directory)
        #expect(configuration.unreadableFiles().count == Self.names.count)
        #expect(configuration.unreadableFiles().contains("trust-root \(directory.path)/root.pem: no such file"))
        for name in Self.names {
            try "x".write(to: directory.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
        #expect(configuration.unreadableFiles().isEmpty)
        // A directory where a file belongs.
        try FileManager.default.removeItem(at: directory.appendingPathComponent("api-ca.pem"))
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("api-ca.pem"), withIntermediateDirectories: false)
        #expect(configuration.unreadableFiles() == ["apple-api-url ca-file \(directory.path)/api-ca.pem: is a directory, not a file"])
    }

    @Test func relativePathsResolveAgainstTheWorkingDirectory() throws {
        let configuration = try parsed("trust-root ./certs/../root.pem sandbox\ndata ./data")
        let cwd = FileManager.default.currentDirectoryPath
        #expect(configuration.referencedFiles.map(\.absolutePath) == [cwd + "/root.pem"])
        #expect(configuration.checkReport().contains("Data directory: ./data (\(cwd)/data)"))
        #expect(configuration.checkReport().contains("  trust-root  \(cwd)/root.pem\n"))
    }

    @Test func privateKeysOthersCanReadAreWarnedAbout() throws {
        let directory = try TestPaths.makeTemporaryDirectory("referenced")
        for name in Self.names {
            try "x".write(to: directory.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
        let configuration = try Self.configuration(in: directory)
        chmod(directory.appendingPathComponent("key.p8").path, 0o644)
        chmod(directory.appendingPathComponent("key.pem").path, 0o600)
        let exposed = configuration.warnings.filter { $0.contains("private key") }
        #expect(exposed == ["app com.acme.journal api-key \(directory.path)/key.p8 is accessible by group or others (mode 644); "
            + "a private key should be readable by its owner alone: chmod 600 \(directory.path)/key.p8"])
        chmod(directory.appendingPathComponent("key.p8").path, 0o400)
        #expect(!configuration.warnings.contains { $0.contains("private key") })
    }

    @Test func plaintextAppleAPIToAnotherHostIsWarnedAbout() throws {
        let remote = try parsed("apple-api-url http://api-proxy.internal:8080")
        #expect(remote.warnings.contains { $0.hasPrefix("apple-api-url http://api-proxy.internal:8080 is plaintext http://") })
        for local in ["http://127.0.0.1:8080", "http://localhost:8080", "http://[::1]:8080", "https://api-proxy.internal"] {
            #expect(!(try parsed("apple-api-url \(local)")).warnings.contains { $0.hasPrefix("apple-api-url") }, "\(local)")
        }
    }
}
