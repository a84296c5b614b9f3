/// The method frames and content a publishing client sends (AMQP 0-9-1 §1.4), as bytes.
enum AMQPOutgoing {
    /// Connection.StartOk (10,11) with PLAIN (RFC 4616: `\0user\0password`). The capabilities
    /// ask for publisher confirms and Basic.Nack, and `authentication_failure_close` so that a
    /// wrong password is a Connection.Close 403 rather than a silent hang-up.
    static func startOk(user: String, password: String, product: String) -> AMQPFrame {
        var writer = method(10, 11)
        writer.table([
            ("product", .string(product)),
            ("platform", .string("Swift")),
            ("capabilities", .table([
                ("publisher_confirms", .boolean(true)),
                ("basic.nack", .boolean(true)),
                ("authentication_failure_close", .boolean(true)),
                ("connection.blocked", .boolean(true)),
            ])),
        ])
        writer.shortString("PLAIN")
        writer.longString([0] + Array(user.utf8) + [0] + Array(password.utf8))
        writer.shortString("en_US")
        return AMQPFrame(.method, channel: 0, payload: writer.bytes)
    }

    /// Connection.TuneOk (10,31).
    static func tuneOk(channelMax: UInt16, frameMax: UInt32, heartbeat: UInt16) -> AMQPFrame {
        var writer = method(10, 31)
        writer.short(channelMax)
        writer.long(frameMax)
        writer.short(heartbeat)
        return AMQPFrame(.method, channel: 0, payload: writer.bytes)
    }

    /// Connection.Open (10,40): the virtual host.
    static func open(virtualHost: String) -> AMQPFrame {
        var writer = method(10, 40)
        writer.shortString(virtualHost)
        writer.shortString("")
        writer.octet(0)
        return AMQPFrame(.method, channel: 0, payload: writer.bytes)
    }

    /// Connection.Close (10,50) from the client: 200, nothing wrong.
    static func close(code: UInt16, text: String) -> AMQPFrame {
        var writer = method(10, 50)
        writer.short(code)
        writer.shortString(text)
        writer.short(0)
        writer.short(0)
        return AMQPFrame(.method, channel: 0, payload: writer.bytes)
    }

    static func closeOk() -> AMQPFrame { AMQPFrame(.method, channel: 0, payload: method(10, 51).bytes) }

    /// Channel.Open (20,10).
    static func channelOpen(_ channel: UInt16) -> AMQPFrame {
        var writer = method(20, 10)
        writer.shortString("")
        return AMQPFrame(.method, channel: channel, payload: writer.bytes)
    }

    static func channelCloseOk(_ channel: UInt16) -> AMQPFrame { AMQPFrame(.method, channel: channel, payload: method(20, 41).bytes) }

    /// Confirm.Select (85,10): every later publish on the channel is acked or nacked.
    static func confirmSelect(_ channel: UInt16) -> AMQPFrame {
        var writer = method(85, 10)
        writer.octet(0)
        return AMQPFrame(.method, channel: channel, payload: writer.bytes)
    }

    static let heartbeat = AMQPFrame(.heartbeat, channel: 0, payload: [])

    /// Basic.Publish (60,40), its content header (class 60) and the body in frames of at most
    /// `frameMax` bytes each, overhead included (§4.2.6). `mandatory`: a message no queue
    /// takes comes back as Basic.Return instead of vanishing.
    static func publish(_ message: AMQPMessage, channel: UInt16, frameMax: Int, into bytes: inout [UInt8]) {
        var writer = method(60, 40)
        writer.short(0)
        writer.shortString(message.exchange)
        writer.shortString(message.routingKey)
        writer.octet(1)  // mandatory, not immediate
        AMQPFrame(.method, channel: channel, payload: writer.bytes).encode(into: &bytes)

        var header = AMQPWriter()
        header.short(60)
        header.short(0)
        header.longlong(UInt64(message.body.count))
        // Property flags (§4.2.6.1, Basic's properties in order, bit 15 first): content-type,
        // headers, delivery-mode, message-id.
        let contentType: UInt16 = 1 << 15, headers: UInt16 = 1 << 13, deliveryMode: UInt16 = 1 << 12, messageId: UInt16 = 1 << 7
        header.short(contentType | headers | deliveryMode | messageId)
        header.shortString(message.contentType)
        header.table(message.headers.map { ($0.name, .string($0.value)) })
        header.octet(2)  // persistent
        header.shortString(message.messageId)
        AMQPFrame(.header, channel: channel, payload: header.bytes).encode(into: &bytes)

        let chunk = max(1, frameMax - AMQPFrame.overhead)
        var start = 0
        while start < message.body.count {
            let end = min(start + chunk, message.body.count)
            AMQPFrame(.body, channel: channel, payload: Array(message.body[start..<end])).encode(into: &bytes)
            start = end
        }
    }

    private static func method(_ classId: UInt16, _ methodId: UInt16) -> AMQPWriter {
        var writer = AMQPWriter()
        writer.short(classId)
        writer.short(methodId)
        return writer
    }
}
