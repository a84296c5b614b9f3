import StoreRelayCore

/// One operation a NATS server sends (NATS "Client Protocol"): what `NATSParser` yields.
public enum NATSServerMessage: Sendable, Equatable {
    /// `INFO {...}`: the server's greeting, and later cluster updates.
    case info(NATSServerInfo)
    /// `MSG` or `HMSG`: a message for one of our subscriptions.
    case message(NATSInboundMessage)
    case ping
    case pong
    /// `+OK` (verbose mode only; we do not ask for it, but a server may still send it).
    case ok
    /// `-ERR 'reason'`, the quotes removed.
    case error(String)
}

/// A message delivered to a subscription: a JetStream PubAck on our reply inbox.
public struct NATSInboundMessage: Sendable, Equatable {
    public var subject: String
    public var sid: String
    public var replyTo: String?
    /// The header block (`NATS/1.0 503\r\n...\r\n\r\n`) of an `HMSG`; nil for a `MSG`.
    public var headers: [UInt8]?
    public var payload: [UInt8]

    init(subject: String, sid: String, replyTo: String? = nil, headers: [UInt8]? = nil, payload: [UInt8]) {
        self.subject = subject
        self.sid = sid
        self.replyTo = replyTo
        self.headers = headers
        self.payload = payload
    }

    /// The status code on the header block's first line (`NATS/1.0 503`): 503 is "no
    /// responders" (nothing listens on the subject), nil when there is none.
    public var status: Int? {
        guard let headers else { return nil }
        let firstLine = headers.prefix { $0 != UInt8(ascii: "\r") && $0 != UInt8(ascii: "\n") }
        let words = firstLine.split(separator: UInt8(ascii: " "), maxSplits: 2)
        guard words.count >= 2 else { return nil }
        return Int(String(decoding: words[1], as: UTF8.self))
    }

    /// The status line's description (`No Responders`), empty when none.
    public var statusDescription: String {
        guard let headers else { return "" }
        let firstLine = headers.prefix { $0 != UInt8(ascii: "\r") && $0 != UInt8(ascii: "\n") }
        let words = firstLine.split(separator: UInt8(ascii: " "), maxSplits: 2)
        return words.count == 3 ? String(decoding: words[2], as: UTF8.self) : ""
    }
}

/// What the client needs of the server's INFO.
public struct NATSServerInfo: Sendable, Equatable {
    public var serverId = ""
    public var tlsRequired = false
    public var tlsAvailable = false
    public var headers = false
    /// The largest message payload (headers included) the server takes; 1 MiB by default.
    public var maxPayload = 1 << 20

    init(serverId: String = "", tlsRequired: Bool = false, tlsAvailable: Bool = false, headers: Bool = false,
         maxPayload: Int = 1 << 20) {
        self.serverId = serverId
        self.tlsRequired = tlsRequired
        self.tlsAvailable = tlsAvailable
        self.headers = headers
        self.maxPayload = maxPayload
    }

    /// The fields of an INFO's JSON; nil when it is not a JSON object.
    init?(json bytes: [UInt8]) {
        guard let json = try? JSONValue.parse(bytes), json.objectValue != nil else { return nil }
        serverId = json["server_id"]?.stringValue ?? ""
        tlsRequired = json["tls_required"]?.boolValue ?? false
        tlsAvailable = json["tls_available"]?.boolValue ?? false
        headers = json["headers"]?.boolValue ?? false
        if let limit = json["max_payload"]?.int64Value, limit > 0, limit <= Int64(Int32.max) { maxPayload = Int(limit) }
    }
}
