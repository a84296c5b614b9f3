/// A broker's reply code and text: why it closed a connection or a channel, or returned a
/// message (§1.4.2.9, §1.5.2.5, §1.8.3.11).
public struct AMQPReply: Sendable, Hashable, CustomStringConvertible {
    public var code: UInt16
    public var text: String
    /// The method that caused a close (0 when none), for the message.
    public var classId: UInt16 = 0
    public var methodId: UInt16 = 0
    /// Where a returned message was going.
    public var exchange: String = ""
    public var routingKey: String = ""

    public init(code: UInt16, text: String, classId: UInt16 = 0, methodId: UInt16 = 0, exchange: String = "", routingKey: String = "") {
        self.code = code
        self.text = text
        self.classId = classId
        self.methodId = methodId
        self.exchange = exchange
        self.routingKey = routingKey
    }

    init(_ reader: inout AMQPReader) throws(AMQPReader.Truncated) {
        code = try reader.short()
        text = try reader.shortString()
        classId = try reader.short()
        methodId = try reader.short()
    }

    /// `404 NOT_FOUND - no exchange 'x' in vhost '/'`: the broker's own text starts with the name.
    public var description: String { "\(code) \(text)" }

    /// Whether trying again later can succeed (§1.1 reply codes): a forced close, a resource
    /// or internal error, a channel or frame mix-up of this client's making (a new connection
    /// starts clean). Access refused, not found, precondition failed, not allowed, invalid
    /// path (no such vhost) and not implemented stay refused until the operator changes
    /// something, so they count as a refusal.
    public var isTransient: Bool {
        switch code {
        case 320, 405, 506, 541: true  // connection-forced, resource-locked, resource-error, internal-error
        case 501, 502, 503, 504, 505: true  // frame, syntax, command-invalid, channel, unexpected-frame
        case 311, 312, 313: false  // content-too-large, no-route, no-consumers
        default: false  // 402 invalid-path, 403 access-refused, 404 not-found, 406 precondition-failed, 530, 540
        }
    }
}
