import Foundation
import StoreRelayAWS
import StoreRelayCore
import StoreRelayNet
import StoreRelayTestSupport
import Testing

/// One moto server for the suite.
private let sharedMoto = Result { try MotoServerProcess() }

/// The SQS client against moto's server, read back with boto3.
@Suite(.serialized, .enabled(if: MotoServerProcess.isAvailable, Comment(rawValue: MotoServerProcess.skipMessage)))
struct SQSClientTests {
    private func client(_ moto: MotoServerProcess, queueURL: String) throws -> SQSClient {
        SQSClient(queueURL: try HTTPURL(queueURL), endpoint: try HTTPURL(moto.endpoint), region: MotoServerProcess.region,
                  credentials: AWSCredentials(accessKeyId: MotoServerProcess.accessKeyId, secretAccessKey: MotoServerProcess.secretAccessKey),
                  caFile: nil, client: HTTPClient())
    }

    private func send(_ client: SQSClient, _ message: SQSMessage) throws -> SQSAnswer {
        try waitForCompletion { client.send(message, timeout: .seconds(5), at: .now(), completion: $0) }
    }

    @Test func messagesArriveWithTheirAttributes() throws {
        let moto = try sharedMoto.get()
        let client = try client(moto, queueURL: try moto.createQueue("standard"))
        let answer = try send(client, SQSMessage(body: #"{"id":"e1","note":"é"}"#, attributes: [("type", "TEST"), ("verified", "true")]))
        #expect(answer.verdict == .delivered && answer.messageId != nil, "\(answer.summary)")
        let read = try moto.drain(queue: "standard").map { try JSONValue.parse($0) }
        #expect(read.count == 1)
        #expect(read.first?["body"]?.stringValue == #"{"id":"e1","note":"é"}"#)
        #expect(read.first?["attributes"]?["type"]?.stringValue == "TEST" && read.first?["attributes"]?["verified"]?.stringValue == "true")
    }

    @Test func aFIFOQueueKeepsTheGroupAndDeduplicationIds() throws {
        let moto = try sharedMoto.get()
        let client = try client(moto, queueURL: try moto.createQueue("orders.fifo"))
        #expect(client.isFIFO)
        for _ in 0..<2 {  // the same deduplication id twice: SQS keeps one
            let answer = try send(client, SQSMessage(body: "{}", groupId: "2000000000000001", deduplicationId: "event-1"))
            #expect(answer.verdict == .delivered, "\(answer.summary)")
        }
        let read = try moto.drain(queue: "orders.fifo").map { try JSONValue.parse($0) }
        #expect(read.count == 1)
        #expect(read.first?["groupId"]?.stringValue == "2000000000000001" && read.first?["dedupId"]?.stringValue == "event-1")
    }

    @Test func aMissingQueueIsRefused() throws {
        let moto = try sharedMoto.get()
        let client = try client(moto, queueURL: "https://sqs.us-east-1.amazonaws.com/123456789012/no-such-queue")
        let answer = try send(client, SQSMessage(body: "{}"))
        #expect(answer.verdict == .refused && answer.status == 400, "\(answer.summary)")
        #expect(answer.summary.contains("NonExistentQueue") || answer.summary.contains("QueueDoesNotExist"), "\(answer.summary)")
    }

    @Test func noEndpointIsAnErrorNotAnAnswer() throws {
        let port = try RedisServerProcess.freePort()
        let client = SQSClient(
            queueURL: try HTTPURL("http://127.0.0.1:\(port)/1/q"), endpoint: nil, region: "us-east-1",
            credentials: AWSCredentials(accessKeyId: "a", secretAccessKey: "b"), caFile: nil, client: HTTPClient())
        #expect(throws: HTTPClientError.self) { try send(client, SQSMessage(body: "{}")) }
    }
}
