import Foundation
import StoreRelayCore
import StoreRelayTestSupport
import Testing

/// One moto server for the suite.
private let sharedMoto = Result { try MotoServerProcess() }

/// The `sqs` destination end to end: the gateway built in-process, moto's server as SQS,
/// read back with boto3. Single-node and cluster mode.
@Suite("SQS delivery end to end", .serialized, .enabled(if: MotoServerProcess.isAvailable, Comment(rawValue: MotoServerProcess.skipMessage)))
struct SQSDeliveryTests {
    let signer: NotificationSigner
    init() throws { signer = try NotificationSigner(authority: TestCertificateAuthority()) }

    private func gateway(_ body: String, cluster: RedisServerProcess? = nil) throws -> Gateway {
        let directory = try Gateway.directory(trusting: signer.authority, "storerelay-sqs")
        let clusterBlock = cluster.map { "cluster redis://127.0.0.1:\($0.port) {\n    instance-id sqs-a\n}\n" } ?? ""
        return try Gateway(config: Gateway.bareConfig("trust-root ./test-root.pem\n" + clusterBlock + body), directory: directory)
    }

    /// A destination on `queueURL` through moto, credentials from the block.
    private func destination(_ name: String, _ moto: MotoServerProcess, _ queueURL: String, _ options: String = "",
                             timeout: String = "3s") -> String {
        """
        destination \(name) sqs \(queueURL) {
            endpoint \(moto.endpoint)
            region \(MotoServerProcess.region)
            access-key-id \(MotoServerProcess.accessKeyId)
            secret-access-key \(MotoServerProcess.secretAccessKey)
            backoff 50ms 500ms
            timeout \(timeout)
        \(options)
        }
        """
    }

    /// Reads `queue` until `predicate` holds for everything read so far, or 20 s pass.
    private func messages(_ moto: MotoServerProcess, queue: String, until predicate: ([JSONValue]) -> Bool) throws -> [JSONValue] {
        var read: [JSONValue] = []
        let deadline = Date().addingTimeInterval(20)
        repeat {
            read += try moto.drain(queue: queue).compactMap { try? JSONValue.parse($0) }
            if predicate(read) { break }
            Thread.sleep(forTimeInterval: 0.1)
        } while Date() < deadline
        return read
    }

    @Test func everyEventOnceWithItsMetadataAsAttributes() throws {
        let moto = try sharedMoto.get()
        let queueURL = try moto.createQueue("e2e-events")
        let gateway = try gateway("\(destination("crm", moto, queueURL))\nroute * * * -> crm")
        let events = [("SUBSCRIBED", "INITIAL_BUY"), ("DID_RENEW", nil), ("REFUND", nil)].map { (UUID().uuidString.lowercased(), $0.0, $0.1) }
        for (uuid, type, subtype) in events {
            #expect(try gateway.post(json: try signer.body(uuid: uuid, type: type, subtype: subtype)).status == 200)
        }
        let read = try messages(moto, queue: "e2e-events") { $0.count >= 3 }
        #expect(read.count == 3)
        for (uuid, type, subtype) in events {
            let message = try #require(read.first { $0["attributes"]?["id"]?.stringValue == uuid }, "\(uuid) not read")
            let attributes = try #require(message["attributes"])
            #expect(attributes["type"]?.stringValue == type && attributes["subtype"]?.stringValue == subtype)
            #expect(attributes["environment"]?.stringValue == "sandbox" && attributes["bundleId"]?.stringValue == "com.acme.journal")
            #expect(attributes["verified"]?.stringValue == "true")
            let body = try JSONValue.parse(try #require(message["body"]?.stringValue))
            #expect(body["id"]?.stringValue == uuid && body["type"]?.stringValue == type)
            #expect(message["groupId"] == .null)
        }
        #expect(gateway.deadLetters.isEmpty)
    }

    @Test func aFIFOQueueGroupsByOriginalTransactionId() throws {
        let moto = try sharedMoto.get()
        let queueURL = try moto.createQueue("e2e-orders.fifo")
        let gateway = try gateway("\(destination("crm", moto, queueURL, "    format apple"))\nroute * * * -> crm")
        let uuid = UUID().uuidString.lowercased()
        let body = try signer.body(uuid: uuid)
        #expect(try gateway.post(json: body).status == 200)
        let read = try messages(moto, queue: "e2e-orders.fifo") { !$0.isEmpty }
        #expect(read.count == 1)
        #expect(read.first?["groupId"]?.stringValue == "2000000000000001")
        #expect(read.first?["dedupId"]?.stringValue == uuid)
        #expect(read.first?["body"]?.stringValue == body, "format apple sends Apple's body")
    }

    /// moto keeps its queues in memory, so the endpoint is frozen (every request times out)
    /// rather than killed, and resumed.
    @Test func anEndpointDownMidRunLosesNothing() throws {
        let moto = try sharedMoto.get()
        let queueURL = try moto.createQueue("e2e-restart")
        let gateway = try gateway("\(destination("crm", moto, queueURL, "    max-attempts 1000", timeout: "1s"))\nroute * * * -> crm")
        var uuids: [String] = []
        func post(_ count: Int) throws {
            for _ in 0..<count {
                let uuid = UUID().uuidString.lowercased()
                uuids.append(uuid)
                #expect(try gateway.post(json: try signer.body(uuid: uuid)).status == 200)
            }
        }
        try post(3)
        var read = try messages(moto, queue: "e2e-restart") { $0.count >= 3 }
        moto.pause()
        try post(3)
        Thread.sleep(forTimeInterval: 1.5)  // attempts time out (timeout 1s) and are scheduled for retry
        moto.resume()
        let before = read
        read += try messages(moto, queue: "e2e-restart") { Set((before + $0).compactMap { $0["attributes"]?["id"]?.stringValue }) == Set(uuids) }
        #expect(Set(read.compactMap { $0["attributes"]?["id"]?.stringValue }) == Set(uuids))
        #expect(gateway.deadLetters.isEmpty)
    }

    @Test func aMissingQueueEndsAsADeadLetter() throws {
        let moto = try sharedMoto.get()
        let gateway = try gateway("""
            \(destination("crm", moto, "https://sqs.us-east-1.amazonaws.com/123456789012/no-such-queue", "    max-attempts 2"))
            route * * * -> crm
            """)
        #expect(try gateway.post(json: try signer.body(uuid: UUID().uuidString.lowercased())).status == 200)
        #expect(gateway.waitForDeadLetters { $0.count == 1 }, "\(gateway.deadLetters)")
        let letter = try #require(gateway.deadLetters.first)
        #expect(letter["reason"]?.stringValue == "rejected")
        #expect(letter["detail"]?.stringValue?.contains("HTTP 400") == true, "\(letter)")
    }

    @Test(.enabled(if: RedisServerProcess.isAvailable, "redis-server is not installed"))
    func clusterModeDeliversToo() throws {
        let moto = try sharedMoto.get()
        let queueURL = try moto.createQueue("e2e-cluster.fifo")
        let server = try RedisServerProcess()
        let gateway = try gateway("\(destination("crm", moto, queueURL))\nroute * * * -> crm", cluster: server)
        let uuids = (0..<3).map { _ in UUID().uuidString.lowercased() }
        for uuid in uuids { #expect(try gateway.post(json: try signer.body(uuid: uuid)).status == 200) }
        let read = try messages(moto, queue: "e2e-cluster.fifo") { $0.count >= 3 }
        #expect(Set(read.compactMap { $0["dedupId"]?.stringValue }) == Set(uuids))
        withExtendedLifetime(server) {}
    }
}
