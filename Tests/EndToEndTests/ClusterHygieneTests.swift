import Foundation
import StoreRelayCore
import StoreRelayTestSupport
import Testing

/// Cluster mode's hygiene (issue 26) end to end: real `storerelay serve` processes and a real
/// `redis-server`. One live process per instance id; a killed instance's consumer leaves
/// the groups once its deliveries are claimed; the server's password never shows; mutual TLS.
@Suite(.serialized, .enabled(if: RedisServerProcess.isAvailable, "redis-server is not installed (apt-get install redis-server)"))
struct ClusterHygieneTests {
    let ca: TestCertificateAuthority

    init() throws {
        ca = try TestCertificateAuthority()
    }

    /// A configuration for instance `instance` of a cluster on `url`, with `options` in the
    /// cluster block and `body` after it.
    func configuration(_ url: String, instance: String, options: String = "", body: String = "destination all file ./data/q\nroute * * * -> all") -> String {
        Gateway.bareConfig("""
            trust-root ./test-root.pem
            cluster \(url) {
                instance-id \(instance)
                claim-after 2s
                \(options)
            }
            \(body)
            """)
    }

    func process(_ config: String, _ directory: URL? = nil, environment: [String: String] = [:]) throws -> GatewayProcess {
        let directory = try directory ?? Gateway.directory(trusting: ca, "storerelay-hygiene")
        return try GatewayProcess(config: config, directory: directory, environment: environment)
    }

    func post(_ process: GatewayProcess, port: Int) throws -> CurlResponse {
        let gateway = Gateway(process: process, port: port, directory: process.directory)
        return try gateway.post(signedPayload: TestChainTests.notification(uuid: UUID().uuidString.lowercased(), ca: ca, variant: .valid))
    }

    /// Issue 26, point 5: a second live instance with the same id refuses to start, with a
    /// sentence; the first, killed with SIGKILL, starts again with its id once its claim has
    /// lapsed; stopped gracefully, it gives the id back at once.
    @Test func oneLiveProcessPerInstanceId() throws {
        let server = try RedisServerProcess()
        let config = configuration("redis://127.0.0.1:\(server.port)", instance: "twin")
        let first = try process(config)
        _ = try first.waitForPort()

        let twin = try process(config)
        let status = twin.waitForExit(timeout: 45)
        #expect(status != nil && status != 0, "the twin is still running")
        let log = twin.logLines.joined(separator: "\n")
        #expect(log.contains("instance-id twin is in use by another instance") && log.contains("it renews its claim"), "\(log)")
        #expect(first.isRunning)

        first.send(SIGKILL)
        _ = first.waitForExit()
        let restarted = try process(config, first.directory)
        let started = Date()
        let port = try restarted.waitForPort(timeout: 45)
        #expect(Date().timeIntervalSince(started) < 30, "at most the claim's 15 s, and the reconnects")
        #expect(try post(restarted, port: port).status == 200)

        restarted.send(SIGTERM)
        #expect(restarted.waitForExit(timeout: 30) == 0)
        let again = try process(config, first.directory)
        let quick = Date()
        _ = try again.waitForPort(timeout: 30)
        #expect(Date().timeIntervalSince(quick) < 8, "a graceful stop released the id: no wait")
        #expect(!again.logLines.contains { $0.contains("waiting for the claim to lapse") })
    }

    /// Issue 26, point 6: the consumer of a killed instance leaves the destination's group
    /// once another instance has claimed and delivered what it left pending.
    @Test func aKilledInstancesConsumerLeavesTheGroup() throws {
        let server = try RedisServerProcess()
        let sink = try WebhookSink(secret: testSigningSecret)
        let body = webhookDestination("hook", sink.url("/slow/2500"), options: "concurrency 4\ntimeout 10s") + "\nroute * * * -> hook"
        let url = "redis://127.0.0.1:\(server.port)"
        let a = try process(configuration(url, instance: "doomed", body: body))
        let aPort = try a.waitForPort()
        for _ in 0..<3 { #expect(try post(a, port: aPort).status == 200) }
        #expect(sink.waitFor { $0.count == 3 }, "in flight on the doomed instance")
        a.send(SIGKILL)
        _ = a.waitForExit()
        let b = try process(configuration(url, instance: "heir", body: body))
        _ = try b.waitForPort()
        #expect(pollUntil(timeout: 60, interval: 0.5) { consumers(server, "hook") == ["heir"] }, "\(consumers(server, "hook"))")
        #expect(sink.waitFor { $0.count == 6 }, "each delivery tried by the doomed instance, then by its heir")
        #expect(b.logLines.contains { $0.contains("cluster consumers of dead instances removed") && $0.contains("doomed") })
    }

    /// Issue 26, point 1: the server's password, given by `password` from the environment and
    /// holding `/`, `:` and `@`, appears nowhere: not in `check`, logs, `/api/status` or the page.
    @Test func thePasswordNeverShows() throws {
        let secret = "pa/ss:w@rd-hunter2"
        let server = try RedisServerProcess(extraArguments: ["--requirepass", secret])
        let config = configuration("redis://127.0.0.1:\(server.port)", instance: "quiet", options: "password ${REDIS_PASSWORD}")
        let environment = ["REDIS_PASSWORD": secret]
        let gateway = try process(config, environment: environment)
        let port = try gateway.waitForPort()
        let adminPort = try gateway.waitForPort(listener: "admin")
        #expect(try post(gateway, port: port).status == 200, "authenticated with the block's password")
        let token = try String(contentsOf: gateway.directory.appendingPathComponent("data/admin.token"), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let auth = ["Authorization: Bearer \(token)"]
        let status = try Curl.get("http://127.0.0.1:\(adminPort)/api/status", headers: auth)
        #expect(status.status == 200 && status.body.contains("redis://:***@127.0.0.1"), "\(status.body)")
        let page = try Curl.get("http://127.0.0.1:\(adminPort)/", headers: auth)
        #expect(page.status == 200)
        let check = try CommandRunner.storerelay(["check", "--config", gateway.configPath.path], environment: ProcessInfo.processInfo
            .environment.merging(environment) { $1 }, directory: gateway.directory)
        #expect(check.status == 0 && check.stdout.contains("password <set>"), "\(check.stdout)\(check.stderr)")
        // A wrong one in a URL, with a '/' in it: refused, and still not shown.
        let wrong = try process(configuration("redis://:wr/ong-hunter2@127.0.0.1:\(server.port)", instance: "loud"))
        #expect(wrong.waitForExit(timeout: 30) != 0)
        for text in [status.body, page.body, check.stdout, check.stderr, gateway.logLines.joined(), wrong.logLines.joined()] {
            #expect(!text.contains("hunter2") && !text.contains("w@rd"), "\(text.prefix(2000))")
        }
        #expect(wrong.logLines.joined().contains("WRONGPASS"))
    }

    /// Issue 26, point 2: a password over plaintext to another machine is warned about at
    /// start (the server here is unreachable; the instance starts and answers 503).
    @Test func aPlaintextPasswordToAnotherHostIsWarnedAboutAtStart() throws {
        let gateway = try process(configuration("redis://:s3cret-hunter2@192.0.2.1:6379", instance: "far"))
        defer { gateway.send(SIGKILL) }
        let warning = gateway.waitForLog(timeout: 30) { record in
            record["warning"]?.stringValue?.contains("sends its password in plaintext") == true
        }
        #expect(warning != nil, "\(gateway.logLines.joined(separator: "\n"))")
        #expect(!gateway.logLines.joined().contains("hunter2"))
    }

    /// Issue 26, point 3: an instance presents its `client-cert` to a server that
    /// authenticates its clients, and works through it.
    @Test func mutualTLSWithAClientCertificate() throws {
        let certificates = try TLSTestCertificates.shared()
        let tlsPort = try RedisServerProcess.freePort()
        let server = try RedisServerProcess(extraArguments: [
            "--tls-port", String(tlsPort), "--tls-cert-file", certificates.localhost.certificateFile,
            "--tls-key-file", certificates.localhost.privateKeyFile, "--tls-ca-cert-file", certificates.caFile,
            "--tls-auth-clients", "yes",
        ])
        defer { withExtendedLifetime(server) {} }
        let options = "ca-file \(certificates.caFile)\n"
            + "client-cert \(certificates.client.certificateFile) \(certificates.client.privateKeyFile)"
        let gateway = try process(configuration("rediss://localhost:\(tlsPort)", instance: "mtls", options: options))
        let port = try gateway.waitForPort()
        #expect(pollUntil(timeout: 10) { (try? Curl.get("http://127.0.0.1:\(port)/readyz"))?.status == 200 })
        #expect(try post(gateway, port: port).status == 200)
        // Without the certificate the server lets nothing in: the start is not refused (the
        // server may come around), but nothing is acknowledged.
        let anonymous = try process(configuration("rediss://localhost:\(tlsPort)", instance: "anon", options: "ca-file \(certificates.caFile)"))
        let anonymousPort = try anonymous.waitForPort()
        #expect(try post(anonymous, port: anonymousPort).status == 503)
    }
}

/// The consumers of `destination`'s group, by `redis-cli`.
private func consumers(_ server: RedisServerProcess, _ destination: String) -> [String] {
    guard let result = try? CommandRunner.run("redis-cli", ["-p", String(server.port), "XINFO", "CONSUMERS",
                                                            "storerelay:{storerelay}:queue:\(destination)", "storerelay"]) else { return [] }
    let lines = result.stdout.split(separator: "\n").map(String.init)
    return lines.indices.filter { lines[$0] == "name" && $0 + 1 < lines.count }.map { lines[$0 + 1] }.sorted()
}
