import StoreRelayCore

/// One SendMessage to an SQS queue: the body, string message attributes, and for a FIFO
/// queue the group and deduplication ids
/// (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SendMessage.html).
public struct SQSMessage: Sendable, Hashable {
    public var body: String
    /// Sent as `String` message attributes, in order (SQS allows 10).
    public var attributes: [(name: String, value: String)]
    public var groupId: String?
    public var deduplicationId: String?

    public init(body: String, attributes: [(name: String, value: String)] = [], groupId: String? = nil, deduplicationId: String? = nil) {
        self.body = body
        self.attributes = attributes
        self.groupId = groupId
        self.deduplicationId = deduplicationId
    }

    public static func == (lhs: SQSMessage, rhs: SQSMessage) -> Bool {
        lhs.body == rhs.body && lhs.attributes.map(\.name) == rhs.attributes.map(\.name)
            && lhs.attributes.map(\.value) == rhs.attributes.map(\.value) && lhs.groupId == rhs.groupId
            && lhs.deduplicationId == rhs.deduplicationId
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(body)
        for attribute in attributes { hasher.combine(attribute.name); hasher.combine(attribute.value) }
        hasher.combine(groupId)
        hasher.combine(deduplicationId)
    }

    /// The SendMessage request body in the SQS JSON protocol.
    public func jsonBody(queueURL: String) -> [UInt8] {
        var members: [JSONObject.Member] = [("QueueUrl", .string(queueURL)), ("MessageBody", .string(body))]
        if !attributes.isEmpty {
            let values = attributes.map { attribute -> JSONObject.Member in
                (attribute.name, ["DataType": "String", "StringValue": .string(attribute.value)])
            }
            members.append(("MessageAttributes", .object(JSONObject(values))))
        }
        if let groupId { members.append(("MessageGroupId", .string(groupId))) }
        if let deduplicationId { members.append(("MessageDeduplicationId", .string(deduplicationId))) }
        return JSONValue.object(JSONObject(members)).serializedBytes()
    }

    /// Whether `text` may be a FIFO group or deduplication id: 1 to 128 characters among
    /// letters, digits and ASCII punctuation (`!"#$%&'()*+,-./:;<=>?@[\]^_\`{|}~`).
    public static func isValidFIFOId(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 128 && text.utf8.allSatisfy { $0 >= 0x21 && $0 <= 0x7E }
    }
}
