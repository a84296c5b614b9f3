import StoreRelayNet

/// How an Amazon SQS destination is sent to (`destination NAME sqs QUEUE-URL { ... }`, SPEC
/// "Destinations beyond webhooks"): SendMessage over the SQS JSON protocol, signed with
/// Signature Version 4. A queue whose name ends in `.fifo` gets `MessageGroupId` and
/// `MessageDeduplicationId`.
public struct SQSOptions: Sendable, Hashable {
    /// The queue, `https://sqs.REGION.amazonaws.com/ACCOUNT/QUEUE` (plain http only on loopback).
    public var queueURL: HTTPURL
    /// The signing region: the block's `region`, else `AWS_REGION` / `AWS_DEFAULT_REGION`,
    /// else the region in an `sqs.REGION.amazonaws.com` URL.
    public var region = ""
    /// The access key: the block's, else `AWS_ACCESS_KEY_ID` with its secret and token.
    public var accessKeyId = ""
    public var secretAccessKey = ConfigSecret("")
    public var sessionToken: ConfigSecret?
    /// Whether the credentials came from the environment rather than the block (for `check`).
    public var credentialsFromEnvironment = false
    /// Where requests go instead of the queue URL's origin (a VPC endpoint, a local emulator).
    public var endpoint: HTTPURL?
    /// An extra PEM CA file trusted for the endpoint's HTTPS, as written.
    public var caFile: String?
    /// Body format, timeout, concurrency and retry limits, as for every kind.
    public var delivery = DeliveryOptions()

    public init(queueURL: HTTPURL) { self.queueURL = queueURL }

    /// Whether the queue is FIFO (its name ends in `.fifo`).
    public var isFIFO: Bool { queueURL.pathAndQuery.hasSuffix(".fifo") }
}
