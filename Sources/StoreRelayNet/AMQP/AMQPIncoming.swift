/// The methods a broker sends that a publishing client acts on (AMQP 0-9-1 §1.4, class and
/// method ids from the spec's XML), decoded from a method frame's payload. Any other method
/// is `other`, with its ids, so the state machine can say which one surprised it.
public enum AMQPIncoming: Sendable, Hashable {
    /// Connection.Start (10,10): the SASL mechanisms offered, space-separated.
    case connectionStart(versionMajor: UInt8, versionMinor: UInt8, mechanisms: String)
    /// Connection.Secure (10,20): a SASL challenge; PLAIN never gets one.
    case connectionSecure
    /// Connection.Tune (10,30): the broker's limits, 0 meaning none.
    case connectionTune(channelMax: UInt16, frameMax: UInt32, heartbeat: UInt16)
    /// Connection.OpenOk (10,41).
    case connectionOpenOk
    /// Connection.Close (10,50): the broker ends the connection, with why.
    case connectionClose(AMQPReply)
    /// Connection.CloseOk (10,51).
    case connectionCloseOk
    /// Connection.Blocked (10,60) / Unblocked (10,61): a resource alarm holds publishes back.
    case connectionBlocked(reason: String)
    case connectionUnblocked
    /// Channel.OpenOk (20,11).
    case channelOpenOk
    /// Channel.Close (20,40): the broker ends the channel, with why.
    case channelClose(AMQPReply)
    /// Channel.CloseOk (20,41).
    case channelCloseOk
    /// Confirm.SelectOk (85,11): publisher confirms are on.
    case confirmSelectOk
    /// Basic.Ack (60,80) and Basic.Nack (60,120): publisher confirms.
    case basicAck(deliveryTag: UInt64, multiple: Bool)
    case basicNack(deliveryTag: UInt64, multiple: Bool)
    /// Basic.Return (60,50): a mandatory message no queue took; its content follows.
    case basicReturn(AMQPReply)
    case other(classId: UInt16, methodId: UInt16)

    /// Decodes a method frame's payload.
    public static func decode(_ payload: [UInt8]) throws(AMQPFrameParser.ProtocolError) -> AMQPIncoming {
        var reader = AMQPReader(payload)
        do {
            let classId = try reader.short()
            let methodId = try reader.short()
            switch (classId, methodId) {
            case (10, 10):
                let major = try reader.octet()
                let minor = try reader.octet()
                try reader.skipTable()
                let mechanisms = String(decoding: try reader.longString(), as: UTF8.self)
                _ = try reader.longString()
                return .connectionStart(versionMajor: major, versionMinor: minor, mechanisms: mechanisms)
            case (10, 20): return .connectionSecure
            case (10, 30):
                return .connectionTune(channelMax: try reader.short(), frameMax: try reader.long(), heartbeat: try reader.short())
            case (10, 41): return .connectionOpenOk
            case (10, 50): return .connectionClose(try AMQPReply(&reader))
            case (10, 51): return .connectionCloseOk
            case (10, 60): return .connectionBlocked(reason: try reader.shortString())
            case (10, 61): return .connectionUnblocked
            case (20, 11): return .channelOpenOk
            case (20, 40): return .channelClose(try AMQPReply(&reader))
            case (20, 41): return .channelCloseOk
            case (85, 11): return .confirmSelectOk
            case (60, 80): return .basicAck(deliveryTag: try reader.longlong(), multiple: try reader.octet() & 1 == 1)
            case (60, 120): return .basicNack(deliveryTag: try reader.longlong(), multiple: try reader.octet() & 1 == 1)
            case (60, 50):
                let code = try reader.short()
                let text = try reader.shortString()
                let exchange = try reader.shortString()
                let routingKey = try reader.shortString()
                return .basicReturn(AMQPReply(code: code, text: text, exchange: exchange, routingKey: routingKey))
            default: return .other(classId: classId, methodId: methodId)
            }
        } catch {
            throw AMQPFrameParser.ProtocolError("a method frame is shorter than its method (\(payload.prefix(4).map(String.init)))")
        }
    }
}
