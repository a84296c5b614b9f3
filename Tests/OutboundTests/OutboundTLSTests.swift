import Dispatch
import Foundation
import StoreRelayCore
@testable import StoreRelayNet
import StoreRelayTestSupport
import Testing

/// The driver's TLS upgrade against StoreRelay's own TLS server: verification against the
/// endpoint's CA, one context per identity, and a CA file rotated on disk taken up.
@Suite struct OutboundTLSTests {
    let certificates: TLSTestCertificates
    let server: HTTPServer
    let port: UInt16

    init() throws {
        certificates = try TLSTestCertificates.shared()
        var configuration = HTTPServerConfiguration(address: "127.0.0.1:0")
        configuration.tls = try HTTPServerTLS(
            certificateChainFile: certificates.localhost.certificateFile, privateKeyFile: certificates.localhost.privateKeyFile)
        server = HTTPServer(configuration: configuration) { request, responder in
            _ = responder.respond(HTTPResponse(status: 200, contentType: "text/plain", body: "hello \(request.target)"))
        }
        port = UInt16(try server.start())
    }

    private func stop() {
        let done = Locked(false)
        server.shutdown { done.withLock { $0 = true } }
        _ = pollUntil(timeout: 15) { done.current }
    }

    /// A connection to "localhost" (resolved to 127.0.0.1) that sends one request and waits
    /// for the server's answer or a failure.
    private func exchange(_ identity: TLSClientIdentity, connector: OutboundConnector) -> DriverRecorder {
        let recorder = DriverRecorder(OutboundEndpoint(host: "localhost", port: port, tls: identity), connector: connector)
        recorder.open(writing: "GET /tls HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        _ = pollUntil(timeout: 10) { recorder.text.hasSuffix("hello /tls") || recorder.failure.current != nil }
        recorder.run { $0.close() }
        return recorder
    }

    private func connector() -> OutboundConnector {
        OutboundConnector(resolver: TableResolver(["localhost": [loopback(port)]]))
    }

    @Test func connectionsWithOneIdentityShareOneContext() throws {
        defer { stop() }
        let connector = connector()
        let identity = TLSClientIdentity(caFile: certificates.caFile)
        for _ in 0..<3 {
            let recorder = exchange(identity, connector: connector)
            #expect(recorder.text.hasPrefix("HTTP/1.1 200") && recorder.text.hasSuffix("hello /tls"), "\(recorder.text)")
            #expect(Array(recorder.heard.current.prefix(2)) == [.resolved, .established])
        }
        #expect(connector.tlsContextCount == 1)
    }

    @Test func anUntrustedServerFailsTheHandshakeWithOpenSSLsReason() throws {
        defer { stop() }
        let recorder = exchange(TLSClientIdentity(), connector: connector())
        let failure = try #require(recorder.failure.current)
        #expect(failure.code == .handshake && failure.tlsError?.code == .certificate, "\(failure)")
        #expect(failure.message.hasPrefix("TLS handshake with localhost:\(port) failed: "), "\(failure.message)")
        #expect(recorder.text.isEmpty, "the request never left")
    }

    @Test func anUnreadableCAFileIsASetupFailure() throws {
        defer { stop() }
        let recorder = exchange(TLSClientIdentity(caFile: certificates.caFile + ".missing"), connector: connector())
        let failure = try #require(recorder.failure.current)
        #expect(failure.code == .tlsSetup && failure.message.hasPrefix("TLS setup for localhost:\(port) failed"), "\(failure)")
    }

    /// The cached context notices that its CA file changed: a rotated bundle is read again.
    @Test func aRotatedCAFileIsReadByTheNextConnection() throws {
        defer { stop() }
        let directory = try TestPaths.makeTemporaryDirectory("storerelay-outbound")
        let bundle = directory.appendingPathComponent("ca.pem").path
        let unknownCA = certificates.directory.appendingPathComponent("unknown-ca.pem").path
        try FileManager.default.copyItem(atPath: unknownCA, toPath: bundle)
        let connector = connector()
        let before = exchange(TLSClientIdentity(caFile: bundle), connector: connector)
        #expect(before.failure.current?.tlsError?.code == .certificate, "\(String(describing: before.failure.current))")

        try FileManager.default.removeItem(atPath: bundle)
        try FileManager.default.copyItem(atPath: certificates.caFile, toPath: bundle)
        let after = exchange(TLSClientIdentity(caFile: bundle), connector: connector)
        #expect(after.failure.current == nil && after.text.hasSuffix("hello /tls"), "\(String(describing: after.failure.current))")
        #expect(connector.tlsContextCount == 1)
    }
}
