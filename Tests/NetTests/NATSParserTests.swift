@testable import StoreRelayNet
import Testing

/// `NATSParser` on what a NATS server sends: each operation, every chunking of a stream
/// giving the same operations, and a protocol error for each malformed line.
@Suite struct NATSParserTests {
    static let stream = Array((
        "INFO {\"server_id\":\"S1\",\"headers\":true,\"max_payload\":1048576,\"tls_available\":true}\r\n"
        + "PING\r\npong\r\n+OK\r\n-ERR 'Authorization Violation'\r\n"
        + "MSG _INBOX.a.1 1 27\r\n{\"stream\":\"EVENTS\",\"seq\":7}\r\n"
        + "MSG reply.x 2 inbox.r 3\r\na\r\n\r\n"
        + "HMSG _INBOX.a.2 1 30 30\r\nNATS/1.0 503 No Responders\r\n\r\n\r\n"
        + "HMSG s 1 12 14\r\nNATS/1.0\r\n\r\nhi\r\n"
    ).utf8)

    static let expected: [NATSServerMessage] = [
        .info(NATSServerInfo(serverId: "S1", tlsAvailable: true, headers: true, maxPayload: 1_048_576)),
        .ping, .pong, .ok, .error("Authorization Violation"),
        .message(NATSInboundMessage(subject: "_INBOX.a.1", sid: "1", replyTo: nil, headers: nil, payload: Array("{\"stream\":\"EVENTS\",\"seq\":7}".utf8))),
        .message(NATSInboundMessage(subject: "reply.x", sid: "2", replyTo: "inbox.r", headers: nil, payload: Array("a\r\n".utf8))),
        .message(NATSInboundMessage(subject: "_INBOX.a.2", sid: "1", replyTo: nil, headers: Array("NATS/1.0 503 No Responders\r\n\r\n".utf8), payload: [])),
        .message(NATSInboundMessage(subject: "s", sid: "1", replyTo: nil, headers: Array("NATS/1.0\r\n\r\n".utf8), payload: Array("hi".utf8))),
    ]

    /// Every message of `chunks` fed in order, and the error that stopped it, if any.
    static func parse(_ chunks: [ArraySlice<UInt8>], limits: NATSParser.Limits = .init()) -> ([NATSServerMessage], NATSError?) {
        var parser = NATSParser(limits: limits)
        var messages: [NATSServerMessage] = []
        for chunk in chunks {
            parser.append(chunk)
            do {
                while let message = try parser.next() { messages.append(message) }
            } catch {
                return (messages, error)
            }
        }
        return (messages, nil)
    }

    @Test func everyOperationAtOnceByteByByteAndSplitAtEveryOffset() {
        let whole = Self.parse([Self.stream[...]])
        #expect(whole.0 == Self.expected && whole.1 == nil)
        let bytewise = Self.parse(Self.stream.indices.map { Self.stream[$0...$0] })
        #expect(bytewise.0 == Self.expected && bytewise.1 == nil)
        for cut in 0...Self.stream.count {
            let split = Self.parse([Self.stream[..<cut], Self.stream[cut...]])
            #expect(split.0 == Self.expected && split.1 == nil, "cut at \(cut)")
        }
    }

    @Test func statusOfAHeaderBlock() {
        let noResponders = NATSInboundMessage(subject: "s", sid: "1", headers: Array("NATS/1.0 503\r\n\r\n".utf8), payload: [])
        #expect(noResponders.status == 503 && noResponders.statusDescription == "")
        let plain = NATSInboundMessage(subject: "s", sid: "1", headers: Array("NATS/1.0\r\nA: b\r\n\r\n".utf8), payload: [])
        #expect(plain.status == nil)
        #expect(NATSInboundMessage(subject: "s", sid: "1", headers: nil, payload: []).status == nil)
    }

    @Test(arguments: [
        ("INFO nope\r\n", "an INFO line without a JSON object"),
        ("INFO [1]\r\n", "an INFO line without a JSON object"),
        ("HELLO\r\n", "an unknown operation 'HELLO'"),
        ("MSG a\r\n", "a MSG line with 1 arguments"),
        ("MSG a 1 b c 3\r\n", "a MSG line with 5 arguments"),
        ("MSG a 1 x\r\n", "a MSG line with a bad size"),
        ("MSG a 1 -3\r\n", "a MSG line with a bad size"),
        ("MSG a 1 99999999999\r\n", "a MSG line with a bad size"),
        ("HMSG a 1 9 4\r\n", "an HMSG line with a bad header size"),
        ("HMSG a 1 4\r\n", "an HMSG line with 3 arguments"),
        ("MSG a 1 2\r\nabcd\r\n", "a message payload not followed by CRLF"),
        ("MSG a 1 100\r\n", "a message of 100 bytes (the limit is 64)"),
    ])
    func malformedInputIsAProtocolError(input: String, reason: String) {
        var limits = NATSParser.Limits()
        limits.maxMessage = 64
        let (messages, error) = Self.parse([Array(input.utf8)[...]], limits: limits)
        #expect(messages.isEmpty)
        #expect(error?.code == .protocolError && error?.message == "the NATS server sent \(reason)", "\(String(describing: error))")
    }

    @Test func anErrorIsFinal() {
        var parser = NATSParser()
        parser.append(Array("BOGUS\r\nPING\r\n".utf8))
        #expect(throws: NATSError.self) { try parser.next() }
        #expect(throws: NATSError(.protocolError, "the NATS server sent an unknown operation 'BOGUS'")) { try parser.next() }
    }

    @Test func aLineLongerThanTheLimitIsAnErrorBeforeItEnds() {
        var limits = NATSParser.Limits()
        limits.maxLine = 32
        let (_, error) = Self.parse([Array(("INFO {" + String(repeating: " ", count: 40)).utf8)[...]], limits: limits)
        #expect(error?.message == "the NATS server sent a control line longer than 32 bytes")
    }
}
