import BenchKit
import Foundation
import StoreRelayCore
import StoreRelayCrypto
import StoreRelayNet
import StoreRelaySimulator

/// Google Play pushes (issue 32), acknowledged at a fixed rate and at saturation, for an app
/// without a service account (RS256 token check, then the journal's group commit) and for one
/// with (the same check, then the enrichment inbox's group commit; the Developer API is asked
/// after the answer, here a fake in this process that answers at once, and the enriched event
/// is journaled then). The ratio of the two shows what keeping a push for enrichment costs on
/// the acknowledgement path; every push must reach the file queue in both.
///
/// The pushes are signed with `simulate --store play`'s dev key before any timed phase, each
/// with its own `messageId` and token, and Google's key set is served from this process.
struct PlayBenchmark {
    let context: BenchContext
    static let fixedRate = 1_000.0
    static let path = "/play/notifications"
    static let package = "com.example.bench"
    static let audience = "https://bench.storerelay.invalid/play"

    func run() throws {
        Report.section("Google Play pushes: RS256 token, then journal or enrichment inbox (fixed \(Format.rate(Self.fixedRate)), then saturation)")
        let key = try PlayDevKey.loadOrCreate(directory: context.work + "/dev-play")
        let keyServer = PlayKeyServer(keys: key, address: "127.0.0.1:0")
        let keyPort = try keyServer.start()
        defer { keyServer.shutdown() }
        let api = FakeDeveloperAPI()
        let apiPort = try api.start()
        defer { api.shutdown() }
        let serviceAccount = try writeServiceAccount(tokenPort: apiPort)

        var saturated: [String: Double] = [:]
        var perRequest: [String: Double] = [:]
        for (title, enriching) in [("direct", false), ("enriched", true)] {
            let (rate, cpu) = try scenario(title, keyPort: keyPort, apiPort: apiPort, serviceAccount: enriching ? serviceAccount : nil, key: key)
            saturated[title] = rate
            perRequest[title] = cpu
        }
        if let direct = saturated["direct"], let enriched = saturated["enriched"], direct > 0 {
            Report.line("enriched ÷ direct: \(Format.fixed(enriched / direct, 2))× accepted/s, "
                        + "\(Format.fixed((perRequest["enriched"] ?? .nan) / (perRequest["direct"] ?? .nan), 2))× gateway CPU per push "
                        + "(the enriched run's CPU includes the enrichment and the second, journaled write)")
        }
        Report.line("Developer API requests answered by the fake: \(api.requests)")
    }

    /// One gateway, warm-up, a fixed-rate run and a saturation run; the saturation rate and
    /// the gateway's CPU per push there.
    private func scenario(_ title: String, keyPort: Int, apiPort: Int, serviceAccount: String?,
                          key: PlayDevKey) throws -> (Double, Double) {
        let name = "play-" + title
        let queue = context.work + "/" + name + "-queue"
        try Files.recreateDirectory(queue)
        var extra = [
            "google-certs-url http://127.0.0.1:\(keyPort)\(PlayKeyServer.path)",
            "path \(Self.path) play",
            "play \(Self.package) {",
            "    push-audience \(Self.audience)",
            "    push-account \(PlayPushRequest.defaultAccount)",
        ]
        if let serviceAccount {
            extra += ["    service-account \(serviceAccount)", "}", "google-api-url http://127.0.0.1:\(apiPort)"]
        } else {
            extra.append("}")
        }
        let gateway = try context.startGateway(name, [.file(name: "queue", directory: queue)], extra: extra)
        defer { gateway.stop() }
        // The key set is fetched in the background after start: pushes answer 503 until then.
        try waitForKeys(gateway)
        let watcher = try FileQueueWatcher(loop: context.loop, directory: queue)
        defer { watcher.stop() }
        let observed = Observed(gateway.process)

        let warm = try corpus(100, key: key)
        _ = try LoadRun.run(loop: context.loop, port: gateway.port, requests: warm, connections: 8, pace: .closedLoop,
                            seconds: 10, server: observed)
        let paced = try LoadRun.run(loop: context.loop, port: gateway.port, requests: try corpus(Int(Self.fixedRate * context.seconds) + 10, key: key),
                                    connections: BenchContext.pacedConnections, pace: .fixedRate(perSecond: Self.fixedRate),
                                    seconds: context.seconds, server: observed)
        Report.line("\(title), fixed \(Format.rate(Self.fixedRate)): \(paced.text)")
        Report.line("   \(paced.cpuText)")
        let full = try LoadRun.run(loop: context.loop, port: gateway.port, requests: try corpus(Int(6_000 * context.seconds), key: key),
                                   connections: context.connections, pace: .closedLoop, seconds: context.seconds, server: observed)
        Report.line("\(title), saturation (\(context.connections) connections): \(full.text)")
        Report.line("   \(full.cpuText); peak RSS \(Format.mib(kilobytes: full.peakRSS))")
        let expected = 100 + paced.result.ok + full.result.ok
        context.wait(seconds: 60) { watcher.receipts.count >= expected }
        Report.line("   delivered to the file queue: \(watcher.receipts.count) of \(expected)")
        return (full.result.throughput, full.serverMicrosecondsPerRequest)
    }

    /// Unique pushes (SUBSCRIPTION_RENEWED), each with its own token, as complete requests.
    private func corpus(_ count: Int, key: PlayDevKey) throws -> [[UInt8]] {
        let factory = PlayPushFactory(key: key)
        var request = PlayPushRequest(type: "SUBSCRIPTION_RENEWED", audience: Self.audience)
        request.packageName = Self.package
        return try (0..<count).map { _ in
            let push = try factory.make(request)
            let body = push.httpBody
            return Array(("POST \(Self.path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                + "Authorization: \(push.authorization)\r\nUser-Agent: APIs-Google (StoreRelay bench)\r\n"
                + "Content-Length: \(body.utf8.count)\r\n\r\n" + body).utf8)
        }
    }

    private func waitForKeys(_ gateway: GatewayRunner) throws {
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            if readText(gateway.logPath)?.contains("google keys fetched") == true { return }
            Thread.sleep(forTimeInterval: 0.05)
        }
        // At `warning` the fetch is not logged: give it the time a loopback fetch needs.
        Thread.sleep(forTimeInterval: 1)
    }

    /// A service-account key file whose token endpoint is the fake's.
    private func writeServiceAccount(tokenPort: Int) throws -> String {
        let pem = try RSAPrivateKey.generate().pemString()
        let document: JSONValue = [
            "type": "service_account", "project_id": "storerelay-bench", "private_key_id": "bench-1",
            "private_key": .string(pem), "client_email": "bench@storerelay-bench.iam.gserviceaccount.com",
            "token_uri": .string("http://127.0.0.1:\(tokenPort)/token"),
        ]
        let path = context.work + "/play-service-account.json"
        try Files.write(path, document.serialized())
        return path
    }
}

/// Google's token endpoint and `purchases.subscriptionsv2.get`, answered at once: every POST
/// gets an access token, every GET a subscription purchase (a real one: production).
final class FakeDeveloperAPI: Sendable {
    private let server: HTTPServer
    private let count = Locked(0)

    init() {
        var configuration = HTTPServerConfiguration(address: "127.0.0.1:0")
        configuration.queueCount = 1
        let count = count
        server = HTTPServer(configuration: configuration) { request, responder in
            count.withLock { $0 += 1 }
            let body = request.method == "POST"
                ? #"{"access_token":"bench-access-token","expires_in":3600,"token_type":"Bearer"}"#
                : #"{"kind":"androidpublisher#subscriptionPurchaseV2","regionCode":"US","subscriptionState":"SUBSCRIPTION_STATE_ACTIVE","latestOrderId":"GPA.0000-0000-0000-00000"}"#
            _ = responder.respond(HTTPResponse(status: 200, contentType: "application/json", body: body))
        }
    }

    func start() throws -> Int { try server.start() }
    func shutdown() { server.shutdown() }
    var requests: Int { count.current }
}
