import StoreRelayNet
import StoreRelayCore

/// Sends messages to one SQS queue with SendMessage over the SQS JSON protocol
/// (`X-Amz-Target: AmazonSQS.SendMessage`, `application/x-amz-json-1.0`), signed with
/// Signature Version 4, through the shared HTTP client.
public struct SQSClient: Sendable {
    /// The queue, as its URL names it in requests (`QueueUrl`).
    public let queueURL: HTTPURL
    /// Where requests go: the queue's own origin, or an override (a VPC endpoint, a local
    /// emulator).
    public let endpoint: HTTPURL
    public let signer: SigV4Signer
    public let caFile: String?
    let client: HTTPClient

    public init(queueURL: HTTPURL, endpoint: HTTPURL?, region: String, credentials: AWSCredentials, caFile: String?,
                client: HTTPClient) {
        self.queueURL = queueURL
        self.endpoint = endpoint ?? HTTPURL(
            scheme: queueURL.scheme, host: queueURL.host, hostKind: queueURL.hostKind, port: queueURL.port, pathAndQuery: "/",
            absoluteString: "\(queueURL.scheme.rawValue)://\(queueURL.hostHeader)/")
        signer = SigV4Signer(credentials: credentials, region: region, service: "sqs")
        self.caFile = caFile
        self.client = client
    }

    /// Whether the queue is FIFO (its name ends in `.fifo`): its messages need a group id.
    public var isFIFO: Bool { queueURL.pathAndQuery.hasSuffix(".fifo") }

    /// The signed request for `message`, as of `time`.
    public func request(for message: SQSMessage, at time: Timestamp) -> HTTPClientRequest {
        var request = HTTPClientRequest(
            method: "POST", url: endpoint,
            headers: ["Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": "AmazonSQS.SendMessage"],
            body: message.jsonBody(queueURL: queueURL.absoluteString), extraCAFile: caFile)
        signer.sign(&request, at: time)
        return request
    }

    /// Sends `message`; `completion` gets SQS's answer, or why there is none.
    public func send(_ message: SQSMessage, timeout: Duration, at time: Timestamp,
                     completion: @escaping @Sendable (Result<SQSAnswer, HTTPClientError>) -> Void) {
        client.execute(request(for: message, at: time), timeout: timeout) { result in
            completion(result.map { SQSAnswer(status: $0.status, headers: $0.headers, body: $0.body) })
        }
    }
}
