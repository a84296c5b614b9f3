/// One message to publish with headers (`HPUB`, NATS 2.2+), whose JetStream PubAck comes back
/// on a reply subject of the client's inbox.
public struct NATSPublish: Sendable {
    public var subject: String
    /// Sent in order; names and values must not hold CR or LF (`NATSPublish.problem`).
    public var headers: [(name: String, value: String)]
    public var payload: [UInt8]

    public init(subject: String, headers: [(name: String, value: String)], payload: [UInt8]) {
        self.subject = subject
        self.headers = headers
        self.payload = payload
    }

    /// Why this message cannot be published however often it is tried (a bad subject, a
    /// header that would break the framing); nil when it can.
    public var problem: String? {
        if let problem = NATSSubject.problem(subject) { return "the subject '\(subject.prefix(200))' cannot be published to: \(problem)" }
        for header in headers {
            let bad = { (text: String) in text.utf8.contains { $0 == 13 || $0 == 10 || $0 == 0 } }
            if bad(header.name) || bad(header.value) || header.name.contains(":") || header.name.isEmpty {
                return "the header \(header.name.prefix(60)) holds a character NATS headers cannot carry"
            }
        }
        return nil
    }

    /// The header block: `NATS/1.0`, one `Name: value` line each, an empty line.
    var headerBlock: [UInt8] {
        var block = Array("NATS/1.0\r\n".utf8)
        for header in headers {
            block += Array(header.name.utf8) + Array(": ".utf8) + Array(header.value.utf8) + [13, 10]
        }
        block += [13, 10]
        return block
    }

    /// `HPUB <subject> <reply> <#header bytes> <#total bytes>␍␊<headers><payload>␍␊`.
    func encoded(replyTo: String) -> [UInt8] {
        let block = headerBlock
        let total = block.count + payload.count
        var out = Array("HPUB \(subject) \(replyTo) \(block.count) \(total)\r\n".utf8)
        out.reserveCapacity(out.count + total + 2)
        out += block
        out += payload
        out += [13, 10]
        return out
    }

    /// The bytes the server counts against its `max_payload`.
    var size: Int { headerBlock.count + payload.count }
}
