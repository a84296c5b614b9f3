import Dispatch
import Testing
import StoreRelayNet
import StoreRelayCore
import StoreRelayTestSupport

/// The real server terminating TLS on loopback: HTTP/1.1 over TLS, and clients that do not
/// complete a handshake (garbage, a stall, TLS 1.1, plain HTTP) are closed without harm.
@Suite struct ServerTLSTests {
    @Test func keepAliveRequestsOverTLS() throws {
        let server = try TLSTestServer()
        defer { server.stop() }
        let client = try server.client()
        #expect(client.engine.protocolVersion == "TLSv1.3")
        for index in 0..<4 {
            try client.send(RawHTTPClient.request("POST", "/n/\(index)", body: "body \(index)"))
            let response = try client.readResponse()
            #expect(response.status == 200)
            #expect(response.bodyText == "POST /n/\(index) body \(index)")
        }
        try client.send(RawHTTPClient.request("GET", "/last", headers: [("Connection", "close")]))
        let last = try client.readResponse()
        #expect(last.status == 200 && last.header("Connection") == "close")
        #expect(client.socket.waitForClose(within: 5))
        #expect(server.logged("TLS established").count == 1)
    }

    /// 20 requests of 1 KiB in one TLS write: more plaintext than one read takes, while the
    /// pipeline holds only 2. The rest waits decrypted in the transport, which no socket
    /// event announces; every request must still be answered, in order.
    @Test func pipelinedRequestsOverTLS() throws {
        let server = try TLSTestServer({ $0.maxPipelinedRequests = 2 }, handler: { request, responder in
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(2)) {
                responder.respond(HTTPResponse(status: 200, contentType: "text/plain", body: "\(request.path) \(request.body.count)"))
            }
        })
        defer { server.stop() }
        let client = try server.client()
        let filler = String(repeating: "x", count: 1024)
        try client.send((0..<20).map { RawHTTPClient.request("POST", "/\($0)", body: filler) }.joined())
        let bodies = try (0..<20).map { _ in try client.readResponse().bodyText }
        #expect(bodies == (0..<20).map { "/\($0) 1024" })
    }

    /// A 3 MiB answer fills the socket: encrypted bytes wait in the transport and the write
    /// is retried until the client has read them all.
    @Test func largeResponseOverTLS() throws {
        let body = (0..<(3 * 1024 * 1024)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let server = try TLSTestServer(handler: { _, responder in
            responder.respond(HTTPResponse(status: 200, headers: ["Content-Type": "application/octet-stream"], body: body))
        })
        defer { server.stop() }
        let client = try server.client()
        try client.send(RawHTTPClient.request("GET", "/big"))
        let response = try client.readResponse()
        #expect(response.status == 200)
        #expect(response.body == body)
        try client.send(RawHTTPClient.request("GET", "/again"))
        #expect(try client.readResponse().body.count == body.count)
    }

    @Test func garbageInsteadOfClientHelloIsClosedAndTheServerCarriesOn() throws {
        let server = try TLSTestServer()
        defer { server.stop() }
        let garbage = try RawHTTPClient(port: server.port)
        try garbage.send(Array("\u{16}\u{03}\u{01}\u{00}\u{07}not a client hello at all".utf8) + [0xFF, 0x00, 0x13, 0x37])
        #expect(garbage.waitForClose(within: 5))
        #expect(waitUntil(timeout: 5) { server.logged("TLS handshake failed").count == 1 })

        let client = try server.client()
        try client.send(RawHTTPClient.request("GET", "/after"))
        #expect(try client.readResponse().bodyText == "GET /after ")
        #expect(waitUntil(timeout: 5) { server.server.connectionCount == 1 })
    }

    /// A ClientHello and then nothing, and a client that sends nothing at all: both are
    /// closed after the read timeout, well before the (long) idle timeout.
    @Test func stalledHandshakeIsClosedAfterTheReadTimeout() throws {
        let server = try TLSTestServer({ $0.readTimeout = .milliseconds(500); $0.idleTimeout = .seconds(60) })
        defer { server.stop() }
        let stalled = try RawHTTPClient(port: server.port)
        let engine = try TLSConnection(clientContext: TLSContext(clientTrustingExtraCAFile: server.caFile), serverName: "localhost")
        #expect(try engine.handshake() == false)
        try stalled.send(engine.takeCiphertext())
        let silent = try RawHTTPClient(port: server.port)
        #expect(stalled.waitForClose(within: 10))
        #expect(silent.waitForClose(within: 10))
        #expect(waitUntil(timeout: 5) { server.server.connectionCount == 0 })
        #expect(server.logged("TLS handshake timeout").count == 2)
    }

    /// Plain HTTP on the TLS port is not a ClientHello: no HTTP answer, the connection closes.
    @Test func plainHTTPToTheTLSPortIsClosed() throws {
        let server = try TLSTestServer()
        defer { server.stop() }
        let plain = try RawHTTPClient(port: server.port)
        try plain.send(RawHTTPClient.request("GET", "/healthz"))
        let received = try plain.readUntilClosed()
        #expect(!received.starts(with: Array("HTTP/".utf8)))
        #expect(waitUntil(timeout: 5) { server.logged("TLS handshake failed").contains { $0.contains("http request") } })
    }

    /// Python offers exactly one version: TLS 1.2 is served, TLS 1.1 refused by the server
    /// (its client is told to allow 1.1, so the refusal is the server's, as its log shows).
    @Test func tls12IsServedAndTLS11Refused() throws {
        try #require(CommandRunner.isAvailable("python3"), "python3 is needed for this test")
        let server = try TLSTestServer()
        defer { server.stop() }
        let script = """
            import socket, ssl, sys
            port, cafile, version = int(sys.argv[1]), sys.argv[2], sys.argv[3]
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            ctx.load_verify_locations(cafile)
            ctx.set_ciphers("DEFAULT:@SECLEVEL=0")  # let the client offer TLS 1.1 at all
            ctx.minimum_version = ssl.TLSVersion.TLSv1
            ctx.maximum_version = getattr(ssl.TLSVersion, version)
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
                    with ctx.wrap_socket(raw, server_hostname="localhost") as tls:
                        tls.sendall(b"GET /v HTTP/1.1\\r\\nHost: localhost\\r\\nConnection: close\\r\\n\\r\\n")
                        data = b""
                        while True:
                            chunk = tls.recv(4096)
                            if not chunk: break
                            data += chunk
                        print("OK", tls.version(), data.split(b"\\r\\n")[0].decode())
            except ssl.SSLError as e:
                print("REFUSED", e.reason)
            """
        let tls12 = try CommandRunner.run("python3", ["-c", script, "\(server.port)", server.caFile, "TLSv1_2"])
        #expect(tls12.stdout.hasPrefix("OK TLSv1.2 HTTP/1.1 200 OK"), "\(tls12.stdout) \(tls12.stderr)")
        let tls11 = try CommandRunner.run("python3", ["-c", script, "\(server.port)", server.caFile, "TLSv1_1"])
        #expect(tls11.stdout.hasPrefix("REFUSED"), "\(tls11.stdout) \(tls11.stderr)")
        #expect(waitUntil(timeout: 5) {
            server.logged("TLS handshake failed").contains { $0.contains("unsupported protocol") }
        }, "\(server.log.lines)")
    }
}
