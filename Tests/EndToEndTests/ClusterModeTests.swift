import Foundation
import StoreRelayCore
import StoreRelayTestSupport
import Testing

/// Cluster mode end to end (issue 14): several real `storerelay serve` processes sharing one
/// real `redis-server` (appendonly yes, appendfsync always), Apple's notifications signed by
/// a test CA, a recording webhook sink downstream.
@Suite(.serialized, .enabled(if: RedisServerProcess.isAvailable, "redis-server is not installed (apt-get install redis-server)"))
struct ClusterModeTests {
    let ca: TestCertificateAuthority

    init() throws {
        ca = try TestCertificateAuthority()
    }

    /// One instance: a gateway in its own directory, with its admin port and token.
    typealias Instance = AdminGateway

    func configuration(_ server: RedisServerProcess, instance: String, body: String, claimAfter: String = "2s") -> String {
        Gateway.bareConfig("""
            trust-root ./test-root.pem
            cluster redis://127.0.0.1:\(server.port) {
                instance-id \(instance)
                claim-after \(claimAfter)
            }
            \(body)
            """)
    }

    func start(_ server: RedisServerProcess, instance: String, body: String, host: Gateway.Host = .inProcess) throws -> Instance {
        let directory = try Gateway.directory(trusting: ca, "storerelay-cluster-\(instance)")
        let gateway = try Gateway(config: configuration(server, instance: instance, body: body), directory: directory, host: host)
        return try AdminGateway(gateway)
    }

    /// A server, a signature-checking sink, and instances `a` and `b` routing everything to one
    /// webhook, `hook`, at the sink's `path`.
    struct Pair {
        let server: RedisServerProcess
        let sink: WebhookSink
        /// The destination and route lines both instances run with.
        let body: String
        let a: Instance
        let b: Instance
    }

    func pair(_ path: String, options: String = "") throws -> Pair {
        let server = try RedisServerProcess()
        let sink = try WebhookSink(secret: testSigningSecret)
        let body = webhookDestination("hook", sink.url(path), options: options) + "\nroute * * * -> hook"
        return Pair(server: server, sink: sink, body: body,
                    a: try start(server, instance: "a", body: body), b: try start(server, instance: "b", body: body))
    }

    func post(_ instance: Instance, _ uuid: String) throws -> CurlResponse {
        try instance.gateway.post(signedPayload: TestChainTests.notification(uuid: uuid, ca: ca, variant: .valid))
    }

    /// Requests the sink received on `path`, by webhook-id.
    func counts(_ sink: WebhookSink, _ path: String) -> [String: Int] {
        sink.requests(path: path).reduce(into: [:]) { counts, request in
            counts[request["headers"]?["webhook-id"]?.stringValue ?? "", default: 0] += 1
        }
    }

    /// A server that could lose an acknowledged notification is refused at start, with one
    /// sentence naming the setting.
    @Test func aServerWithoutAppendOnlyAlwaysIsRefusedAtStart() throws {
        let server = try RedisServerProcess(durable: false)
        let directory = try Gateway.directory(trusting: ca, "storerelay-cluster-volatile")
        let process = try GatewayProcess(config: configuration(server, instance: "a", body: "route * * * -> all\ndestination all file ./data/q"),
                                         directory: directory)
        let status = process.waitForExit(timeout: 20)
        #expect(status != nil && status != 0)
        let log = process.logLines.joined(separator: "\n")
        #expect(log.contains("appendonly no") && log.contains("cluster mode needs appendonly yes"), "\(log)")
    }

    /// The same notification posted to two instances is one event: the second answer is
    /// `duplicate`, the webhook gets it once, and either instance's admin API tells its state
    /// and lists both instances with the server's durability.
    @Test func theSameNotificationOnTwoInstancesIsOneEvent() throws {
        let cluster = try pair("/ok")
        defer { withExtendedLifetime(cluster) {} }
        let (sink, a, b) = (cluster.sink, cluster.a, cluster.b)
        let uuid = UUID().uuidString.lowercased()
        let first = try post(a, uuid)
        #expect(first.status == 200 && first.json?["status"]?.stringValue == "accepted", "\(first.body)")
        let second = try post(b, uuid)
        #expect(second.status == 200 && second.json?["status"]?.stringValue == "duplicate", "\(second.body)")
        #expect(sink.waitFor { $0.count == 1 })
        #expect(pollUntil(timeout: 10) { b.deliveryState(uuid, "hook") == "delivered" })
        Thread.sleep(forTimeInterval: 0.5)
        #expect(sink.requests.count == 1, "delivered once")
        #expect(sink.requests.first?["signatureValid"]?.boolValue == true)

        let status = try #require(try b.get("/api/status").json?["cluster"])
        #expect(status["instanceId"]?.stringValue == "b")
        #expect(pollUntil(timeout: 10) {
            let ids = (try? b.get("/api/status").json?["cluster"]?["instances"]?.arrayValue?.compactMap { $0["id"]?.stringValue }) ?? nil
            return ids == ["a", "b"]
        })
        #expect(status["durability"]?["appendonly"]?.stringValue == "yes")
        #expect(status["durability"]?["appendfsync"]?.stringValue == "always")
        let ready = try Curl.get(a.gateway.baseURL + "/readyz")
        #expect(ready.status == 200)
    }

    /// Redelivery in cluster mode (SPEC "Delivery controls"): asked of the instance that did
    /// not accept the event, it goes to the webhook once more with its own id, a valid
    /// signature and the redelivery mark; an unknown event or destination is refused.
    @Test func aDeliveredEventIsRedeliveredThroughEitherInstance() throws {
        let cluster = try pair("/ok")
        defer { withExtendedLifetime(cluster) {} }
        let (sink, a, b) = (cluster.sink, cluster.a, cluster.b)
        let uuid = UUID().uuidString.lowercased()
        #expect(try post(a, uuid).status == 200)
        #expect(pollUntil(timeout: 10) { b.deliveryState(uuid, "hook") == "delivered" })
        let answer = try b.post("/api/events/\(uuid)/redeliver", json: #"{"destination":"hook"}"#)
        #expect(answer.status == 202, "\(answer.body)")
        #expect(sink.waitFor { $0.count == 2 })
        let again = sink.requests[1]
        #expect(again["headers"]?["webhook-id"]?.stringValue == uuid)
        #expect(again["headers"]?["storerelay-redelivery"]?.stringValue == "1")
        #expect(sink.requests[0]["headers"]?["storerelay-redelivery"] == nil)
        #expect(again["signatureValid"]?.boolValue == true)
        #expect(pollUntil(timeout: 10) { a.deliveryState(uuid, "hook") == "delivered" })
        let unknown = try a.post("/api/events/\(UUID().uuidString.lowercased())/redeliver", json: #"{"destination":"hook"}"#)
        #expect(unknown.status == 404)
        let nowhere = try a.post("/api/events/\(uuid)/redeliver", json: #"{"destination":"nowhere"}"#)
        #expect(nowhere.status == 404)
        Thread.sleep(forTimeInterval: 0.5)
        #expect(sink.requests.count == 2)
    }

    /// Notifications spread over three instances each reach every destination once: the
    /// webhook, and the file queue the instances share, each writing its own subdirectory.
    @Test func notificationsSpreadOverThreeInstancesReachEveryDestinationOnce() throws {
        let server = try RedisServerProcess()
        let sink = try WebhookSink(secret: testSigningSecret)
        let shared = try TestPaths.makeTemporaryDirectory("storerelay-cluster-shared")
        let body = webhookDestination("hook", sink.url("/ok")) + "\ndestination lake file \(shared.path)/lake\nroute * * * -> hook, lake"
        let instances = try ["a", "b", "c"].map { try start(server, instance: $0, body: body) }
        let uuids = (0..<30).map { _ in UUID().uuidString.lowercased() }
        for (index, uuid) in uuids.enumerated() {
            #expect(try post(instances[index % 3], uuid).status == 200)
        }
        #expect(sink.waitFor(timeout: 30) { Set($0.compactMap { $0["headers"]?["webhook-id"]?.stringValue }).count == 30 })
        let lake = Gateway(process: instances[0].gateway.process, port: instances[0].gateway.port, directory: shared)
        let lines = { ["a", "b", "c"].flatMap { lake.fileQueueLines("lake/\($0)") } }
        #expect(pollUntil(timeout: 30) { lines().count >= 30 })
        Thread.sleep(forTimeInterval: 1)
        #expect(counts(sink, "/ok").values.allSatisfy { $0 == 1 } && counts(sink, "/ok").count == 30)
        let ids = lines().compactMap { try? JSONValue.parse($0)["id"]?.stringValue }
        #expect(ids.count == 30 && Set(ids) == Set(uuids), "each event once in the file queue")
    }

    /// `kill -9` of an instance with deliveries in flight: after `claim-after`, another
    /// instance claims and delivers every one of them.
    @Test func theDeliveriesOfAKilledInstanceAreClaimedByAnother() throws {
        let server = try RedisServerProcess()
        let sink = try WebhookSink(secret: testSigningSecret)
        let body = webhookDestination("hook", sink.url("/slow/2500"), options: "concurrency 8\ntimeout 10s") + "\nroute * * * -> hook"
        let a = try start(server, instance: "a", body: body, host: .childProcess)
        let uuids = (0..<6).map { _ in UUID().uuidString.lowercased() }
        for uuid in uuids { #expect(try post(a, uuid).status == 200) }
        #expect(sink.waitFor { $0.count == 6 }, "all six in flight on a")
        a.gateway.process.send(SIGKILL)
        _ = a.gateway.process.waitForExit()
        let b = try start(server, instance: "b", body: body)
        #expect(pollUntil(timeout: 30) { uuids.allSatisfy { b.deliveryState($0, "hook") == "delivered" } })
        #expect(counts(sink, "/slow/2500").values.allSatisfy { $0 == 2 }, "each tried by a, then by b")
        let metrics = try b.metrics
        #expect(metrics.contains("storerelay_cluster_claims_total{destination=\"hook\"} 6"), "\(metrics)")
        #expect(!metrics.contains("storerelay_cluster_lost_total{"), "nothing lost")
    }

    /// A destination's `Retry-After` holds its retry back, whichever instance makes it.
    @Test func retryAfterIsHonouredAcrossInstances() throws {
        let cluster = try pair("/ratelimit")
        defer { withExtendedLifetime(cluster) {} }
        let (sink, a, b) = (cluster.sink, cluster.a, cluster.b)
        let uuid = UUID().uuidString.lowercased()
        #expect(try post(a, uuid).status == 200)
        #expect(pollUntil(timeout: 20) { b.deliveryState(uuid, "hook") == "delivered" })
        let times = sink.requests(path: "/ratelimit").compactMap { $0["at"]?.doubleValue }
        #expect(times.count == 2)
        if times.count == 2 { #expect(times[1] - times[0] >= 0.95, "429 with Retry-After: 1 waited \(times[1] - times[0]) s") }
    }

    /// The server killed and restarted: acceptance answers 503 meanwhile (and `/readyz`
    /// too), nothing acknowledged is lost, and deliveries resume.
    @Test func whileTheServerIsDownNothingIsAcknowledged() throws {
        let cluster = try pair("/ok")
        defer { withExtendedLifetime(cluster) {} }
        let (server, sink, a, b) = (cluster.server, cluster.sink, cluster.a, cluster.b)
        let before = (0..<5).map { _ in UUID().uuidString.lowercased() }
        for uuid in before { #expect(try post(a, uuid).status == 200) }
        server.stop()
        #expect(try post(b, UUID().uuidString.lowercased()).status == 503)
        #expect(pollUntil(timeout: 10) { (try? Curl.get(a.gateway.baseURL + "/readyz"))?.status == 503 })
        try server.restart()
        #expect(pollUntil(timeout: 20) { (try? Curl.get(b.gateway.baseURL + "/readyz"))?.status == 200 })
        let after = (0..<5).map { _ in UUID().uuidString.lowercased() }
        for uuid in after { #expect(try post(b, uuid).status == 200) }
        #expect(sink.waitFor(timeout: 30) { Set($0.compactMap { $0["headers"]?["webhook-id"]?.stringValue }).count == 10 })
        #expect(pollUntil(timeout: 10) { (before + after).allSatisfy { a.deliveryState($0, "hook") == "delivered" } })
    }

    /// A dead letter made through one instance is listed and replayed through another; once
    /// the replay is delivered, no instance lists it.
    @Test func aDeadLetterIsReplayedThroughAnotherInstance() throws {
        let cluster = try pair("/flaky/2", options: "max-attempts 2")
        defer { withExtendedLifetime(cluster) {} }
        let (sink, a, b) = (cluster.sink, cluster.a, cluster.b)
        let uuid = UUID().uuidString.lowercased()
        #expect(try post(a, uuid).status == 200)
        #expect(pollUntil(timeout: 20) { (try? b.get("/api/dead-letters"))?.json?["items"]?.arrayValue?.count == 1 })
        let letter = try #require(try b.get("/api/dead-letters").json?["items"]?.arrayValue?.first)
        #expect(letter["reason"]?.stringValue == "exhausted" && letter["eventId"]?.stringValue == uuid)
        let id = try #require(letter["id"]?.stringValue)
        #expect(try a.get("/api/dead-letters/\(id)").status == 200)
        let replay = try b.post("/api/dead-letters/\(id)/replay")
        #expect(replay.status == 200 || replay.status == 202, "\(replay.body)")
        #expect(pollUntil(timeout: 20) { (try? a.get("/api/dead-letters"))?.json?["items"]?.arrayValue?.isEmpty == true })
        #expect(counts(sink, "/flaky/2")[sink.requests.first?["headers"]?["webhook-id"]?.stringValue ?? ""] == 3)
        #expect(a.deliveryState(uuid, "hook") == "delivered")
        let metrics = try a.metrics
        #expect(!metrics.contains("storerelay_dead_letters{destination=\"hook\"} 1"), "\(metrics)")
    }

    /// A reload on one instance (a destination added) leaves the others delivering as before.
    @Test func aReloadOnOneInstanceDoesNotDisturbTheOthers() throws {
        let cluster = try pair("/ok")
        defer { withExtendedLifetime(cluster) {} }
        let (server, sink, body, a, b) = (cluster.server, cluster.sink, cluster.body, cluster.a, cluster.b)
        let reloaded = body + "\n" + webhookDestination("audit", sink.url("/slow/10")) + "\nroute * * * -> audit"
        let uuids = (0..<20).map { _ in UUID().uuidString.lowercased() }
        for (index, uuid) in uuids.enumerated() {
            if index == 10 {
                try configuration(server, instance: "a", body: reloaded).write(to: a.gateway.process.configPath, atomically: true, encoding: .utf8)
                a.gateway.process.send(SIGHUP)
                #expect(a.gateway.process.waitForLog { $0["message"]?.stringValue == "configuration reloaded" } != nil)
            }
            #expect(try post(index % 2 == 0 ? a : b, uuid).status == 200)
        }
        #expect(sink.waitFor(timeout: 30) { Set($0.filter { $0["path"]?.stringValue == "/ok" }.compactMap { $0["headers"]?["webhook-id"]?.stringValue }).count == 20 })
        // Routed to audit only by a, after its reload: b has no such destination yet.
        #expect(sink.waitFor(timeout: 30) { $0.contains { $0["path"]?.stringValue == "/slow/10" } })
        Thread.sleep(forTimeInterval: 0.5)
        #expect(counts(sink, "/ok").values.allSatisfy { $0 == 1 })
        #expect(b.gateway.process.isRunning && a.gateway.process.isRunning)
    }

    /// Issue 27: admin requests waiting for a frozen server suspend rather than hold the
    /// admin listener's queue, so one that needs no server (an id refused before the
    /// backend is asked) is answered at once while they wait, and they are answered once the
    /// server is back. (A raw socket for the quick one: curl processes start slowly here.)
    @Test func adminRequestsWaitingForAFrozenServerHoldUpNoOthers() throws {
        let server = try RedisServerProcess()
        let instance = try start(server, instance: "a", body: "destination all file ./data/q\nroute * * * -> all")
        #expect(try instance.get("/api/dead-letters").status == 200)
        server.pause()
        defer { server.resume() }
        let waiting = Locked<[Int]>([])
        let group = DispatchGroup()
        for path in ["/api/dead-letters", "/api/status", "/api/events/evt-1"] {
            DispatchQueue.global().async(group: group) {
                let status = (try? instance.get(path))?.status ?? 0
                waiting.withLock { $0.append(status) }
            }
        }
        Thread.sleep(forTimeInterval: 1)
        let started = Date()
        let client = try RawHTTPClient(port: instance.adminPort)
        try client.send(RawHTTPClient.request("GET", "/api/dead-letters/not-an-id", headers: [("Authorization", "Bearer \(instance.token)")]))
        let quick = try client.readResponse()
        let took = Date().timeIntervalSince(started)
        let stillWaiting = waiting.current.isEmpty
        #expect(quick.status == 400 && took < 0.5, "answered \(quick.status) after \(took)s")
        #expect(stillWaiting, "the requests on the server were answered before the quick one: \(waiting.current)")
        server.resume()
        #expect(group.wait(timeout: .now() + 30) == .success)
        #expect(waiting.current.count == 3, "\(waiting.current)")
        #expect(pollUntil(timeout: 20) { (try? instance.get("/api/dead-letters"))?.status == 200 })
    }
}
