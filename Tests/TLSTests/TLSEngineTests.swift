import StoreRelayTestSupport
import StoreRelayNet
import Testing

/// The engine as a pure state machine: two `TLSConnection`s talking through byte arrays.
@Suite struct TLSEngineTests {
    let certificates: TLSTestCertificates

    init() throws {
        certificates = try TLSTestCertificates.shared()
    }

    private func serverContext(_ identity: TLSTestCertificates.Identity) throws -> TLSServerContext {
        try TLSServerContext(certificateChainFile: identity.certificateFile, privateKeyFile: identity.privateKeyFile)
    }

    /// Runs both handshakes, passing bytes across, until both finish or one throws.
    private func handshake(_ client: TLSConnection, _ server: TLSConnection) throws {
        for _ in 0..<10 {
            let clientDone = try client.handshake()
            server.receiveCiphertext(client.takeCiphertext())
            let serverDone = try server.handshake()
            client.receiveCiphertext(server.takeCiphertext())
            if clientDone && serverDone { return }
        }
        Issue.record("handshake did not finish")
    }

    @Test func handshakeThenDataBothWaysThenCloseNotify() throws {
        let client = try TLSConnection(
            clientContext: TLSContext(clientTrustingExtraCAFile: certificates.caFile), serverName: "localhost")
        let server = try serverContext(certificates.localhost).makeConnection()
        try handshake(client, server)
        #expect(client.isHandshakeComplete && server.isHandshakeComplete)
        #expect(server.requestedServerName == "localhost")
        #expect(client.protocolVersion == "TLSv1.3")

        try client.writePlaintext(Array("ping".utf8))
        server.receiveCiphertext(client.takeCiphertext())
        var received: [UInt8] = []
        #expect(try server.readPlaintext(into: &received) == .needsInput)
        #expect(received == Array("ping".utf8))

        try server.writePlaintext(Array("pong".utf8))
        server.close()
        client.receiveCiphertext(server.takeCiphertext())
        var answer: [UInt8] = []
        #expect(try client.readPlaintext(into: &answer) == .closed)
        #expect(answer == Array("pong".utf8))
    }

    @Test func certificateForAnotherHostIsACertificateError() throws {
        let client = try TLSConnection(
            clientContext: TLSContext(clientTrustingExtraCAFile: certificates.caFile), serverName: "localhost")
        let server = try serverContext(certificates.otherHost).makeConnection()
        let error = try #require(throws: TLSError.self) { try handshake(client, server) }
        #expect(error.code == .certificate)
        #expect(error.reason.contains("hostname mismatch"), "\(error.reason)")
    }

    @Test func unknownCAIsACertificateErrorAndTheServerHearsTheAlert() throws {
        let client = try TLSConnection(
            clientContext: TLSContext(clientTrustingExtraCAFile: certificates.caFile), serverName: "localhost")
        let server = try serverContext(certificates.untrusted).makeConnection()
        let error = try #require(throws: TLSError.self) { try handshake(client, server) }
        #expect(error.code == .certificate)
        #expect(error.reason.contains("unable to get local issuer certificate"), "\(error.reason)")
        // The client's alert reaches the server, which fails with OpenSSL's reason.
        server.receiveCiphertext(client.takeCiphertext())
        let serverError = try #require(throws: TLSError.self) { _ = try server.handshake() }
        #expect(serverError.code == .handshake)
        #expect(serverError.reason.contains("unknown ca"), "\(serverError.reason)")
        // The error queue was drained: a fresh, good handshake on this thread is clean.
        let goodClient = try TLSConnection(
            clientContext: TLSContext(clientTrustingExtraCAFile: certificates.caFile), serverName: "localhost")
        try handshake(goodClient, try serverContext(certificates.localhost).makeConnection())
        #expect(goodClient.isHandshakeComplete)
    }

    @Test func ipLiteralIsCheckedAgainstIPAddressNames() throws {
        let context = try TLSContext(clientTrustingExtraCAFile: certificates.caFile)
        let good = try TLSConnection(clientContext: context, serverName: "127.0.0.1")
        let server = try serverContext(certificates.localhost).makeConnection()
        try handshake(good, server)
        #expect(server.requestedServerName == nil)  // no SNI for IP literals (RFC 6066 §3)
        let wrong = try TLSConnection(clientContext: context, serverName: "127.0.0.2")
        let error = try #require(throws: TLSError.self) {
            try handshake(wrong, try serverContext(certificates.localhost).makeConnection())
        }
        #expect(error.code == .certificate)
    }

    @Test func truncatedStreamIsAnIOError() throws {
        let client = try TLSConnection(
            clientContext: TLSContext(clientTrustingExtraCAFile: certificates.caFile), serverName: "localhost")
        let server = try serverContext(certificates.localhost).makeConnection()
        try handshake(client, server)
        client.receiveEndOfStream()
        var plaintext: [UInt8] = []
        let error = try #require(throws: TLSError.self) { _ = try client.readPlaintext(into: &plaintext) }
        #expect(error.code == .io)
    }

    @Test func contextErrorsCarryOpenSSLReasons() throws {
        let missing = try #require(throws: TLSError.self) {
            _ = try TLSServerContext(certificateChainFile: "/nonexistent/cert.pem", privateKeyFile: "/nonexistent/key.pem")
        }
        #expect(missing.code == .configuration)
        #expect(missing.reason.contains("/nonexistent/cert.pem"))
        let mismatch = try #require(throws: TLSError.self) {
            _ = try TLSServerContext(
                certificateChainFile: certificates.localhost.certificateFile,
                privateKeyFile: certificates.otherHost.privateKeyFile)
        }
        #expect(mismatch.code == .configuration)
        #expect(mismatch.reason.contains("key values mismatch"), "\(mismatch.reason)")
        let badCA = try #require(throws: TLSError.self) {
            _ = try TLSContext(clientTrustingExtraCAFile: certificates.localhost.privateKeyFile + ".missing")
        }
        #expect(badCA.code == .configuration)
    }
}
