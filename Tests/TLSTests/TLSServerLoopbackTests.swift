import Foundation
import StoreRelayTestSupport
import StoreRelayNet
import Testing

/// The server mode over a real loopback socket, checked by independent clients: curl and
/// Python's `ssl` module.
@Suite struct TLSServerLoopbackTests {
    let certificates: TLSTestCertificates
    let server: TLSEchoServer

    init() throws {
        certificates = try TLSTestCertificates.shared()
        server = try TLSEchoServer(context: TLSServerContext(
            certificateChainFile: certificates.localhost.certificateFile,
            privateKeyFile: certificates.localhost.privateKeyFile))
    }

    /// Waits (polling, with a deadline) until the server recorded `count` connections.
    private func outcomes(count: Int) async throws -> [TLSEchoServer.Outcome] {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            let outcomes = server.outcomes.current
            if outcomes.count >= count { return outcomes }
            try await Task.sleep(for: .milliseconds(10))
        }
        Issue.record("server saw \(server.outcomes.current.count) of \(count) connections")
        return server.outcomes.current
    }

    @Test func curlTrustingTheTestCAGetsTheResponse() async throws {
        defer { server.stop() }
        try #require(CommandRunner.isAvailable("curl"), "curl is needed for this test")
        let result = try CommandRunner.run("curl", [
            "-sS", "--max-time", "10", "--cacert", certificates.caFile, "https://localhost:\(server.port)/hello",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "hello\n")
        let outcome = try #require(try await outcomes(count: 1).first)
        guard case .served(let serverName, let version) = outcome else {
            Issue.record("handshake failed: \(outcome)")
            return
        }
        #expect(serverName == "localhost")
        #expect(version == "TLSv1.3")
    }

    @Test func curlWithoutTheTestCARefusesTheCertificate() async throws {
        defer { server.stop() }
        try #require(CommandRunner.isAvailable("curl"), "curl is needed for this test")
        let result = try CommandRunner.run("curl", ["-sS", "--max-time", "10", "https://localhost:\(server.port)/"])
        #expect(result.status != 0)
        guard case .failed(let error) = try #require(try await outcomes(count: 1).first) else {
            Issue.record("the server should see the client's alert")
            return
        }
        #expect(error.code == .handshake)
    }

    /// Python offers exactly one protocol version; TLS 1.2 is served, TLS 1.1 refused.
    @Test func pythonTLS12IsServedAndTLS11Refused() async throws {
        defer { server.stop() }
        try #require(CommandRunner.isAvailable("python3"), "python3 is needed for this test")
        let script = """
            import socket, ssl, sys
            port, cafile, version = int(sys.argv[1]), sys.argv[2], sys.argv[3]
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            ctx.load_verify_locations(cafile)
            ctx.set_ciphers("DEFAULT:@SECLEVEL=0")  # let the client offer TLS 1.1 at all
            v = getattr(ssl.TLSVersion, version)
            ctx.minimum_version = v
            ctx.maximum_version = v
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
                    with ctx.wrap_socket(raw, server_hostname="localhost") as tls:
                        tls.sendall(b"GET / HTTP/1.1\\r\\nHost: localhost\\r\\n\\r\\n")
                        data = b""
                        while True:
                            chunk = tls.recv(4096)
                            if not chunk: break
                            data += chunk
                        print("OK", tls.version(), data.split(b"\\r\\n")[0].decode())
            except ssl.SSLError as e:
                print("REFUSED", e.reason)
            """
        let tls12 = try CommandRunner.run("python3", ["-c", script, "\(server.port)", certificates.caFile, "TLSv1_2"])
        #expect(tls12.stdout.hasPrefix("OK TLSv1.2 HTTP/1.1 200 OK"), "\(tls12.stdout) \(tls12.stderr)")
        let tls11 = try CommandRunner.run("python3", ["-c", script, "\(server.port)", certificates.caFile, "TLSv1_1"])
        #expect(tls11.stdout.hasPrefix("REFUSED"), "\(tls11.stdout) \(tls11.stderr)")
        #expect(tls11.stdout.contains("PROTOCOL_VERSION") || tls11.stdout.contains("UNSUPPORTED_PROTOCOL"), "\(tls11.stdout)")
        let outcomes = try await outcomes(count: 2)
        let failures = outcomes.compactMap { outcome -> TLSError? in
            if case .failed(let error) = outcome { return error }
            return nil
        }
        #expect(failures.count == 1)
        #expect(failures.first?.code == .handshake)
        #expect(failures.first?.reason.contains("unsupported protocol") == true, "\(failures)")
    }
}
