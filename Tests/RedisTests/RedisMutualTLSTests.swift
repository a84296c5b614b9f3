import Foundation
import StoreRelayCore
@testable import StoreRelayNet
import StoreRelayTestSupport
import Testing

/// `client-cert` (issue 26, point 3): a real `redis-server` that authenticates its clients
/// (`--tls-auth-clients yes`, the test CA as its client CA) lets in a client presenting a
/// certificate of that CA, and no other.
@Suite(.serialized, .enabled(if: RedisServerProcess.isAvailable, "redis-server is not installed (apt-get install redis-server)"))
struct RedisMutualTLSTests {
    private func client(_ url: String, configure: (inout RedisConfiguration) -> Void) throws -> RedisClient {
        var configuration = RedisConfiguration(url: try RedisURL.parse(url))
        configuration.connectTimeout = .seconds(3)
        configuration.reconnectInitial = .milliseconds(20)
        configuration.reconnectMaximum = .milliseconds(200)
        configure(&configuration)
        let client = RedisClient(configuration: configuration)
        client.start()
        return client
    }

    @Test func aServerThatAuthenticatesClientsLetsInOnlyTheCertifiedOne() async throws {
        let certificates = try TLSTestCertificates.shared()
        let tlsPort = try RedisServerProcess.freePort()
        let server = try RedisServerProcess(extraArguments: [
            "--tls-port", String(tlsPort), "--tls-cert-file", certificates.localhost.certificateFile,
            "--tls-key-file", certificates.localhost.privateKeyFile, "--tls-ca-cert-file", certificates.caFile,
            "--tls-auth-clients", "yes",
        ])
        defer { withExtendedLifetime(server) {} }
        let url = "rediss://localhost:\(tlsPort)"

        let certified = try client(url) { configuration in
            configuration.caFile = certificates.caFile
            configuration.clientCertificateFile = certificates.client.certificateFile
            configuration.clientKeyFile = certificates.client.privateKeyFile
        }
        defer { certified.shutdown() }
        try await waitUntil { certified.isConnected }
        #expect(try await certified.reply(RESPCommand("SET", "mutual", "tls")) == .simpleString("OK"))
        #expect(try await certified.reply(RESPCommand("GET", "mutual")).string == "tls")

        // No certificate, or one from a CA the server does not trust: the server ends the
        // handshake, and the client never counts as connected.
        let anonymous = try client(url) { $0.caFile = certificates.caFile }
        defer { anonymous.shutdown() }
        let stranger = try client(url) { configuration in
            configuration.caFile = certificates.caFile
            configuration.clientCertificateFile = certificates.untrusted.certificateFile
            configuration.clientKeyFile = certificates.untrusted.privateKeyFile
        }
        defer { stranger.shutdown() }
        try await waitUntil { anonymous.lastError != nil && stranger.lastError != nil }
        #expect(!anonymous.isConnected && !stranger.isConnected)
        #expect(anonymous.lastError?.code == .unavailable, "\(String(describing: anonymous.lastError))")
        #expect(stranger.lastError?.code == .unavailable, "\(String(describing: stranger.lastError))")
    }

    /// A key that does not belong to the certificate fails before any handshake, naming the
    /// key file.
    @Test func aMismatchedKeyIsNamed() async throws {
        let certificates = try TLSTestCertificates.shared()
        let tlsPort = try RedisServerProcess.freePort()
        let server = try RedisServerProcess(extraArguments: [
            "--tls-port", String(tlsPort), "--tls-cert-file", certificates.localhost.certificateFile,
            "--tls-key-file", certificates.localhost.privateKeyFile, "--tls-ca-cert-file", certificates.caFile,
            "--tls-auth-clients", "yes",
        ])
        defer { withExtendedLifetime(server) {} }
        let mismatched = try client("rediss://localhost:\(tlsPort)") { configuration in
            configuration.caFile = certificates.caFile
            configuration.clientCertificateFile = certificates.client.certificateFile
            configuration.clientKeyFile = certificates.localhost.privateKeyFile
        }
        defer { mismatched.shutdown() }
        try await waitUntil { mismatched.lastError != nil }
        let message = mismatched.lastError?.message ?? ""
        #expect(message.contains(certificates.localhost.privateKeyFile) && message.contains("mismatch"), "\(message)")
    }
}
