import Foundation
import StoreRelayNet
import StoreRelayCore
import StoreRelayTestSupport
import Testing

/// HTTPS against a loopback server whose TLS is `TLSConnection` in server mode, with the
/// test CA trusted through the request's extra CA file.
@Suite struct HTTPSTests {
    let certificates: TLSTestCertificates

    init() throws {
        certificates = try TLSTestCertificates.shared()
    }

    private func server(_ identity: TLSTestCertificates.Identity, names: Locked<[String?]>? = nil) throws -> TestHTTPServer {
        let context = try TLSServerContext(
            certificateChainFile: identity.certificateFile, privateKeyFile: identity.privateKeyFile)
        return try TestHTTPServer(tls: context) { connection in
            names?.withLock { $0.append(connection.serverName) }
            while let request = connection.readRequest() { connection.write(ok("secure \(request.target)")) }
        }
    }

    private func request(_ url: String) throws -> HTTPClientRequest {
        try HTTPClientRequest(url: url, extraCAFile: certificates.caFile)
    }

    @Test func successWithSNIAndKeepAlive() async throws {
        let names = Locked<[String?]>([])
        let server = try server(certificates.localhost, names: names)
        defer { server.stop() }
        let client = makeClient()
        defer { client.shutdown() }
        for path in ["/a", "/b"] {
            let result = await fetch(client, try request("https://localhost:\(server.port)\(path)"))
            #expect(result.bodyText == "secure \(path)", "\(result)")
        }
        #expect(names.current == ["localhost"])
        #expect(server.acceptedCount == 1)
    }

    @Test func ipLiteralMatchesTheCertificatesIPAddress() async throws {
        let names = Locked<[String?]>([])
        let server = try server(certificates.localhost, names: names)
        defer { server.stop() }
        let client = makeClient()
        defer { client.shutdown() }
        let result = await fetch(client, try request("https://127.0.0.1:\(server.port)/ip"))
        #expect(result.bodyText == "secure /ip", "\(result)")
        #expect(names.current == [nil])  // no SNI for an IP literal
    }

    @Test func certificateForAnotherNameIsATLSError() async throws {
        let server = try server(certificates.otherHost)
        defer { server.stop() }
        let client = makeClient()
        defer { client.shutdown() }
        let result = await fetch(client, try request("https://localhost:\(server.port)/"))
        let error = try #require(result.error)
        #expect(error.code == .tls)
        #expect(error.tlsError?.code == .certificate)
        #expect(error.message.contains("hostname mismatch"), "\(error)")
    }

    @Test func unknownCAIsATLSError() async throws {
        let server = try server(certificates.untrusted)
        defer { server.stop() }
        let client = makeClient()
        defer { client.shutdown() }
        let result = await fetch(client, try request("https://localhost:\(server.port)/"))
        let error = try #require(result.error)
        #expect(error.code == .tls)
        #expect(error.tlsError?.code == .certificate)
        #expect(error.message.contains("unable to get local issuer certificate"), "\(error)")
    }

    @Test func withoutTheExtraCAFileTheTestCAIsNotTrusted() async throws {
        let server = try server(certificates.localhost)
        defer { server.stop() }
        let client = makeClient()
        defer { client.shutdown() }
        let result = try await fetch(client, "https://localhost:\(server.port)/")
        #expect(result.error?.code == .tls, "\(result)")
    }

    @Test func aStalledHandshakeIsAConnectTimeout() async throws {
        let server = try TestHTTPServer { connection in
            _ = connection.readRequest()  // plain TCP: never answers the ClientHello
        }
        defer { server.stop() }
        let client = makeClient { $0.connectTimeout = .milliseconds(300) }
        defer { client.shutdown() }
        let result = await fetch(client, try request("https://localhost:\(server.port)/"), timeout: .seconds(30))
        #expect(result.error?.code == .connectTimeout, "\(result)")
    }
}
