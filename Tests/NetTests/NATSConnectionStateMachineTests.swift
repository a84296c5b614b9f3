import Dispatch
@testable import StoreRelayNet
import StoreRelayCore
import Testing

/// `NATSConnectionStateMachine` without a socket: the greeting (INFO, TLS, CONNECT with the
/// credentials, the inbox subscription, PING/PONG), publishes answered by PubAck, error
/// PubAck and "no responders", timeouts, server errors and the end of the connection.
@Suite struct NATSConnectionStateMachineTests {
    typealias Machine = NATSConnectionStateMachine<Int>
    static let info = "INFO {\"server_id\":\"S\",\"headers\":true,\"max_payload\":1024}\r\n"
    static let t0 = DispatchTime(uptimeNanoseconds: 1_000_000_000)

    private func configuration(_ url: String = "nats://127.0.0.1:4222", _ change: (inout NATSConfiguration) -> Void = { _ in }) -> NATSConfiguration {
        var configuration = NATSConfiguration(url: try! NATSURL.parse(url))
        change(&configuration)
        return configuration
    }

    private static func text(_ actions: [Machine.Action]) -> String {
        actions.compactMap { if case .send(let bytes) = $0 { String(decoding: bytes, as: UTF8.self) } else { nil } }.joined()
    }

    private static func delivered(_ actions: [Machine.Action]) -> [(Int, NATSPublishAnswer)] {
        actions.compactMap { if case .deliver(let waiter, let answer) = $0 { (waiter, answer) } else { nil } }
    }

    /// A machine through INFO and PONG, ready to publish.
    private func ready(_ configuration: NATSConfiguration? = nil) -> Machine {
        var machine = Machine(configuration: configuration ?? self.configuration(), inboxToken: "T")
        _ = machine.open(now: Self.t0)
        _ = machine.established()
        _ = machine.received(Array(Self.info.utf8), now: Self.t0)
        _ = machine.received(Array("PONG\r\n".utf8), now: Self.t0)
        #expect(machine.state == .ready)
        return machine
    }

    private func message(_ subject: String = "appstore.sandbox.TEST", id: String = "e1", body: String = "{}") -> NATSPublish {
        NATSPublish(subject: subject, headers: [("Nats-Msg-Id", id), ("StoreRelay-Type", "TEST")], payload: Array(body.utf8))
    }

    @Test func greetsWithConnectSubscriptionAndPing() throws {
        var machine = Machine(configuration: configuration { $0.user = "relay"; $0.password = "p\"w" }, inboxToken: "T")
        guard case .setDeadline(let deadline) = machine.open(now: Self.t0).first else { Issue.record("no connect deadline"); return }
        #expect(deadline == Self.t0.advanced(by: .seconds(5)))
        #expect(machine.established().isEmpty && machine.state == .awaitingInfo)
        let greeting = Self.text(machine.received(Array(Self.info.utf8), now: Self.t0))
        #expect(machine.state == .awaitingPong)
        let lines = greeting.split(separator: "\r\n").map(String.init)
        #expect(lines.count == 3 && lines[1] == "SUB _INBOX.T.* 1" && lines[2] == "PING")
        let connect = try JSONValue.parse(String(lines[0].dropFirst("CONNECT ".count)))
        #expect(connect["verbose"] == false && connect["pedantic"] == false && connect["headers"] == true)
        #expect(connect["no_responders"] == true && connect["tls_required"] == false)
        #expect(connect["user"]?.stringValue == "relay" && connect["pass"]?.stringValue == "p\"w" && connect["auth_token"] == nil)
        _ = machine.received(Array("PONG\r\n".utf8), now: Self.t0)
        #expect(machine.state == .ready)
    }

    @Test func aTokenIsSentAsAuthToken() throws {
        var machine = Machine(configuration: configuration { $0.token = "tok" }, inboxToken: "T")
        _ = machine.established()
        let greeting = Self.text(machine.received(Array(Self.info.utf8), now: Self.t0))
        let connect = try JSONValue.parse(String(greeting.split(separator: "\r\n")[0].dropFirst("CONNECT ".count)))
        #expect(connect["auth_token"]?.stringValue == "tok" && connect["user"] == nil)
    }

    @Test func upgradesToTLSWhenTheURLOrTheServerAsks() {
        for (url, info) in [("tls://h:4222", "{\"headers\":true,\"tls_available\":true}"), ("nats://h:4222", "{\"headers\":true,\"tls_required\":true}")] {
            var machine = Machine(configuration: configuration(url), inboxToken: "T")
            _ = machine.established()
            let actions = machine.received(Array("INFO \(info)\r\n".utf8), now: Self.t0)
            guard case .startTLS? = actions.first, actions.count == 1 else { Issue.record("\(url): \(actions)"); continue }
            #expect(machine.state == .upgrading)
            let greeting = Self.text(machine.established())
            #expect(greeting.hasPrefix("CONNECT {") && greeting.contains("\"tls_required\":true"), "\(greeting)")
            #expect(machine.state == .awaitingPong)
        }
    }

    @Test func refusesAServerWithoutTLSForATLSURLOrWithoutHeaders() {
        var machine = Machine(configuration: configuration("tls://h:4222"), inboxToken: "T")
        _ = machine.established()
        guard case .close(let error, _)? = machine.received(Array("INFO {\"headers\":true}\r\n".utf8), now: Self.t0).first else {
            Issue.record("not closed"); return
        }
        #expect(error.code == .refused && error.message.contains("does not offer TLS"))
        var old = Machine(configuration: configuration(), inboxToken: "T")
        _ = old.established()
        guard case .close(let headersError, _)? = old.received(Array("INFO {}\r\n".utf8), now: Self.t0).first else {
            Issue.record("not closed"); return
        }
        #expect(headersError.message.contains("does not support message headers"))
    }

    @Test func publishesWaitForTheGreetingThenGoOutInOrder() {
        var machine = Machine(configuration: configuration(), inboxToken: "T")
        _ = machine.open(now: Self.t0)
        #expect(machine.publish(message(id: "a"), waiter: 1, deadline: Self.t0.advanced(by: .seconds(2))).isEmpty)
        #expect(machine.publish(message(id: "b"), waiter: 2, deadline: Self.t0.advanced(by: .seconds(3))).isEmpty)
        _ = machine.established()
        _ = machine.received(Array(Self.info.utf8), now: Self.t0)
        let actions = machine.received(Array("PONG\r\n".utf8), now: Self.t0)
        let sent = Self.text(actions)
        #expect(sent.hasPrefix("HPUB appstore.sandbox.TEST _INBOX.T.1 "))
        #expect(sent.contains("HPUB appstore.sandbox.TEST _INBOX.T.2 "))
        #expect(sent.firstRange(of: "Nats-Msg-Id: a")!.lowerBound < sent.firstRange(of: "Nats-Msg-Id: b")!.lowerBound)
        guard case .setDeadline(let deadline)? = actions.last else { Issue.record("no deadline"); return }
        #expect(deadline == Self.t0.advanced(by: .seconds(2)))
    }

    @Test func theHPUBFramesHeadersAndPayload() {
        let bytes = message(body: "hello").encoded(replyTo: "_INBOX.T.9")
        let headers = "NATS/1.0\r\nNats-Msg-Id: e1\r\nStoreRelay-Type: TEST\r\n\r\n"
        #expect(String(decoding: bytes, as: UTF8.self)
            == "HPUB appstore.sandbox.TEST _INBOX.T.9 \(headers.utf8.count) \(headers.utf8.count + 5)\r\n\(headers)hello\r\n")
    }

    @Test func answersMatchTheirPublishesByReplySubject() {
        var machine = ready()
        _ = machine.publish(message(id: "a"), waiter: 1, deadline: Self.t0.advanced(by: .seconds(2)))
        _ = machine.publish(message(id: "b"), waiter: 2, deadline: Self.t0.advanced(by: .seconds(2)))
        _ = machine.publish(message(id: "c"), waiter: 3, deadline: Self.t0.advanced(by: .seconds(2)))
        _ = machine.publish(message(id: "d"), waiter: 4, deadline: Self.t0.advanced(by: .seconds(2)))
        let ack2 = "{\"stream\":\"EVENTS\",\"seq\":8,\"duplicate\":true}"
        let ack1 = "{\"stream\":\"EVENTS\",\"seq\":7}"
        let error = "{\"error\":{\"code\":503,\"err_code\":10077,\"description\":\"maximum messages exceeded\"}}"
        let noResponders = "NATS/1.0 503\r\n\r\n"
        let input = "MSG _INBOX.T.2 1 \(ack2.utf8.count)\r\n\(ack2)\r\nMSG _INBOX.T.1 1 \(ack1.utf8.count)\r\n\(ack1)\r\n"
            + "MSG _INBOX.T.3 1 \(error.utf8.count)\r\n\(error)\r\n"
            + "HMSG _INBOX.T.4 1 \(noResponders.utf8.count) \(noResponders.utf8.count)\r\n\(noResponders)\r\n"
            + "MSG _INBOX.T.1 1 \(ack1.utf8.count)\r\n\(ack1)\r\nMSG other.1 1 2\r\nhi\r\n"
        let answers = Self.delivered(machine.received(Array(input.utf8), now: Self.t0))
        #expect(answers.map(\.0) == [2, 1, 3, 4], "a repeated or foreign answer is ignored")
        #expect(answers[0].1 == .acknowledged(stream: "EVENTS", sequence: 8, duplicate: true))
        #expect(answers[1].1 == .acknowledged(stream: "EVENTS", sequence: 7, duplicate: false))
        #expect(answers[2].1 == .refused("JetStream refused the message: maximum messages exceeded, code 503 (err_code 10077)"))
        #expect(answers[3].1 == .refused("no JetStream stream takes subject 'appstore.sandbox.TEST' (NATS 503 no responders)"))
    }

    @Test func aNonJetStreamAnswerIsARefusal() {
        let answer = NATSPublishAnswer(reply: NATSInboundMessage(subject: "_INBOX.T.1", sid: "1", payload: Array("ok".utf8)), subject: "s")
        #expect(answer == .refused("the answer on 's' is not a JetStream PubAck: ok"))
    }

    @Test func aPublishWithoutAnAnswerInTimeEndsTheConnection() {
        var machine = ready()
        _ = machine.publish(message(id: "a"), waiter: 1, deadline: Self.t0.advanced(by: .seconds(1)))
        _ = machine.publish(message(id: "b"), waiter: 2, deadline: Self.t0.advanced(by: .seconds(2)))
        guard case .setDeadline(let early)? = machine.deadlinePassed(now: Self.t0.advanced(by: .milliseconds(500))).first else {
            Issue.record("an early timer only re-arms"); return
        }
        #expect(early == Self.t0.advanced(by: .seconds(1)) && machine.state == .ready)
        guard case .close(let error, let unanswered)? = machine.deadlinePassed(now: Self.t0.advanced(by: .milliseconds(1500))).first else {
            Issue.record("not closed"); return
        }
        #expect(unanswered == [1, 2] && error.code == .timeout && machine.state == .closed)
        let late = "MSG _INBOX.T.1 1 2\r\n{}\r\n"
        #expect(machine.received(Array(late.utf8), now: Self.t0).isEmpty)
    }

    @Test func aSlowConnectTimesOutAndFailsTheWaitingPublishes() {
        var machine = Machine(configuration: configuration(), inboxToken: "T")
        _ = machine.open(now: Self.t0)
        _ = machine.publish(message(), waiter: 1, deadline: Self.t0.advanced(by: .seconds(60)))
        guard case .setDeadline? = machine.deadlinePassed(now: Self.t0.advanced(by: .seconds(1))).first else {
            Issue.record("an early timer only re-arms"); return
        }
        guard case .close(let error, let unanswered)? = machine.deadlinePassed(now: Self.t0.advanced(by: .seconds(5))).first else {
            Issue.record("not closed"); return
        }
        #expect(error.code == .timeout && unanswered == [1] && machine.state == .closed)
        guard case .fail([2], let closed)? = machine.publish(message(), waiter: 2, deadline: Self.t0).first else {
            Issue.record("a publish on a closed machine fails at once"); return
        }
        #expect(closed.code == .connection)
    }

    @Test func aServerErrorBeforeReadyRefusesTheConnection() {
        var machine = Machine(configuration: configuration(), inboxToken: "T")
        _ = machine.established()
        _ = machine.received(Array(Self.info.utf8), now: Self.t0)
        _ = machine.publish(message(), waiter: 1, deadline: Self.t0.advanced(by: .seconds(60)))
        guard case .close(let error, let unanswered)? = machine.received(Array("-ERR 'Authorization Violation'\r\n".utf8), now: Self.t0).first else {
            Issue.record("not closed"); return
        }
        #expect(error.code == .refused && error.message == "nats://127.0.0.1:4222 answered -ERR 'Authorization Violation'")
        #expect(unanswered == [1])
    }

    @Test func aPermissionsViolationRefusesThatSubjectOnly() {
        var machine = ready()
        _ = machine.publish(message("a.b"), waiter: 1, deadline: Self.t0.advanced(by: .seconds(2)))
        _ = machine.publish(message("c.d"), waiter: 2, deadline: Self.t0.advanced(by: .seconds(2)))
        let answers = Self.delivered(machine.received(Array("-ERR 'Permissions Violation for Publish to \"a.b\"'\r\n".utf8), now: Self.t0))
        #expect(answers.map(\.0) == [1] && machine.state == .ready)
        guard case .refused(let reason)? = answers.first?.1 else { Issue.record("not refused"); return }
        #expect(reason.contains("Permissions Violation"))
    }

    @Test func theEndOfTheConnectionFailsEveryUnansweredPublish() {
        var machine = ready()
        _ = machine.publish(message(), waiter: 1, deadline: Self.t0.advanced(by: .seconds(2)))
        _ = machine.publish(message(), waiter: 2, deadline: Self.t0.advanced(by: .seconds(2)))
        guard case .close(let error, let unanswered)? = machine.inputEnded().first else { Issue.record("not closed"); return }
        #expect(error.code == .connection && unanswered == [1, 2])
        #expect(machine.inputEnded().isEmpty, "closed once")
    }

    @Test func answersPingsAndIgnoresLaterInfo() {
        var machine = ready()
        #expect(Self.text(machine.received(Array("PING\r\n".utf8), now: Self.t0)) == "PONG\r\n")
        #expect(machine.received(Array((Self.info + "+OK\r\n").utf8), now: Self.t0).isEmpty && machine.state == .ready)
    }

    @Test func aMessageLargerThanTheServerTakesIsRefused() {
        var machine = ready()
        let answers = Self.delivered(machine.publish(message(body: String(repeating: "x", count: 2000)), waiter: 1, deadline: Self.t0))
        #expect(answers.map(\.0) == [1])
        guard case .refused(let reason)? = answers.first?.1 else { Issue.record("not refused"); return }
        #expect(reason.contains("exceeds the server's max_payload of 1024 bytes"))
    }

    @Test func aProtocolErrorClosesTheConnection() {
        var machine = ready()
        _ = machine.publish(message(), waiter: 1, deadline: Self.t0.advanced(by: .seconds(2)))
        guard case .close(let error, [1])? = machine.received(Array("BOGUS\r\n".utf8), now: Self.t0).first else {
            Issue.record("not closed"); return
        }
        #expect(error.code == .protocolError)
    }
}
