import Foundation
import Testing
import StoreRelayCore
import StoreRelayTestSupport

/// `storerelay serve` with `tls CERT KEY`: the public listener speaks HTTPS with the test CA's
/// `localhost` identity, to curl and to Python as Apple would reach it.
@Suite("Public listener TLS", .serialized)
struct PublicTLSTests {
    let certificates: TLSTestCertificates

    init() throws {
        certificates = try TLSTestCertificates.shared()
    }

    private var tlsLine: String {
        "tls \(certificates.localhost.certificateFile) \(certificates.localhost.privateKeyFile)"
    }

    /// curl with `args`, returning (exit status, HTTP status or 0, body, stderr).
    private func curl(_ args: [String], body: String? = nil) throws -> (exit: Int32, status: Int, body: String, stderr: String) {
        let marker = "\n--status:"
        var arguments = ["-sS", "--max-time", "20", "-w", marker + "%{http_code}"] + args
        if body != nil { arguments += ["-X", "POST", "--data-binary", "@-", "-H", "Content-Type: application/json"] }
        let result = try CommandRunner.run("curl", arguments, stdin: body.map { Array($0.utf8) } ?? [])
        guard let range = result.stdout.range(of: marker, options: .backwards) else {
            return (result.status, 0, result.stdout, result.stderr)
        }
        return (result.status, Int(result.stdout[range.upperBound...]) ?? 0, String(result.stdout[..<range.lowerBound]), result.stderr)
    }

    @Test func curlPostsANotificationOverHTTPS() throws {
        let uuid = UUID().uuidString.lowercased()
        let gateway = try Gateway(config: Gateway.trustingConfig(tlsLine), directory: Gateway.trustingDirectory())
        let listening = gateway.process.logRecords.first { $0["message"]?.stringValue == "listening" }
        #expect(listening?["tls"]?.stringValue == "yes")

        let url = "https://127.0.0.1:\(gateway.port)\(Gateway.path)"
        let response = try curl(["--cacert", certificates.caFile, url], body: try testSigner.body(uuid: uuid))
        #expect(response.exit == 0, "\(response.stderr)")
        #expect(response.status == 200, "\(response.body)")
        let json = try? JSONValue.parse(response.body)
        #expect(json?["status"]?.stringValue == "accepted")
        #expect(json?["id"]?.stringValue == uuid)
        #expect(gateway.journalContains(uuid))
    }

    @Test func pythonHTTPSConnectionTrustingTheTestCAGetsHealthz() throws {
        try #require(CommandRunner.isAvailable("python3"), "python3 is needed for this test")
        let gateway = try Gateway(config: Gateway.config(tlsLine))
        let script = """
            import http.client, ssl, sys
            ctx = ssl.create_default_context(cafile=sys.argv[2])
            conn = http.client.HTTPSConnection("localhost", int(sys.argv[1]), context=ctx, timeout=10)
            for path in ("/healthz", "/readyz"):  # two requests on one kept-alive connection
                conn.request("GET", path)
                response = conn.getresponse()
                print(response.status, conn.sock.version(), response.read().decode())
            """
        // "localhost" may resolve to ::1 first, where nothing listens; Python then tries 127.0.0.1.
        let result = try CommandRunner.run("python3", ["-c", script, "\(gateway.port)", certificates.caFile])
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == 2, "\(result.stdout) \(result.stderr)")
        #expect(lines.first?.hasPrefix("200 TLSv1.3 {\"status\":\"ok\"}") == true, "\(result.stdout) \(result.stderr)")
        #expect(lines.last?.hasPrefix("200 TLSv1.3 {\"status\":\"ready\"}") == true, "\(result.stdout)")
    }

    @Test func curlWithoutTheTestCAFailsVerification() throws {
        let gateway = try Gateway(config: Gateway.config(tlsLine))
        let url = "https://127.0.0.1:\(gateway.port)/healthz"
        let untrusting = try curl([url])
        #expect(untrusting.exit == 60, "curl exit \(untrusting.exit): \(untrusting.stderr)")  // CURLE_PEER_FAILED_VERIFICATION
        #expect(untrusting.status == 0)
        let plain = try curl(["http://127.0.0.1:\(gateway.port)/healthz"])
        #expect(plain.exit != 0 && plain.status == 0, "plain HTTP must not be answered on the TLS port")
        // The same gateway still serves a client that trusts the CA.
        let trusting = try curl(["--cacert", certificates.caFile, url])
        #expect(trusting.status == 200 && trusting.body == "{\"status\":\"ok\"}", "\(trusting.stderr)")
    }

    @Test func missingKeyFileFailsStartWithTheFileNamed() throws {
        let directory = try TestPaths.makeTemporaryDirectory("storerelay-e2e")
        let missingKey = directory.appendingPathComponent("missing-key.pem").path
        let process = try GatewayProcess(
            config: Gateway.config("tls \(certificates.localhost.certificateFile) \(missingKey)"), directory: directory)
        let failure = process.waitForLog { $0["message"]?.stringValue == "cannot start" }
        #expect(process.waitForExit() == 1)
        let error = failure?["error"]?.stringValue ?? ""
        #expect(error.contains("cannot read the TLS private key file \(missingKey)"), "\(process.logLines)")
        #expect(!process.logRecords.contains { $0["message"]?.stringValue == "listening" })
    }

    @Test func keyNotMatchingTheCertificateFailsStart() throws {
        let directory = try TestPaths.makeTemporaryDirectory("storerelay-e2e")
        let process = try GatewayProcess(
            config: Gateway.config("tls \(certificates.localhost.certificateFile) \(certificates.otherHost.privateKeyFile)"),
            directory: directory)
        let failure = process.waitForLog { $0["message"]?.stringValue == "cannot start" }
        #expect(process.waitForExit() == 1)
        let error = failure?["error"]?.stringValue ?? ""
        #expect(error.contains(certificates.otherHost.privateKeyFile), "\(process.logLines)")
    }
}
