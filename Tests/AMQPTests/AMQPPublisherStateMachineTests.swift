import Dispatch
@testable import StoreRelayNet
import Testing

/// What a broker sends, frame by frame, for the state machine tests.
enum Broker {
    static func method(_ classId: UInt16, _ methodId: UInt16, channel: UInt16 = 0, _ fill: (inout AMQPWriter) -> Void = { _ in }) -> [UInt8] {
        var writer = AMQPWriter()
        writer.short(classId)
        writer.short(methodId)
        fill(&writer)
        var bytes: [UInt8] = []
        AMQPFrame(.method, channel: channel, payload: writer.bytes).encode(into: &bytes)
        return bytes
    }

    static func start(mechanisms: String = "AMQPLAIN PLAIN") -> [UInt8] {
        method(10, 10) {
            $0.octet(0)
            $0.octet(9)
            $0.table([("product", .string("RabbitMQ"))])
            $0.longString(Array(mechanisms.utf8))
            $0.longString(Array("en_US".utf8))
        }
    }

    static func tune(frameMax: UInt32 = 131_072, heartbeat: UInt16 = 60) -> [UInt8] {
        method(10, 30) {
            $0.short(2047)
            $0.long(frameMax)
            $0.short(heartbeat)
        }
    }

    static let openOk = method(10, 41) { $0.shortString("") }
    static let channelOpenOk = method(20, 11, channel: 1) { $0.longString([]) }
    static let selectOk = method(85, 11, channel: 1)

    static func ack(_ tag: UInt64, multiple: Bool = false) -> [UInt8] {
        method(60, 80, channel: 1) {
            $0.longlong(tag)
            $0.octet(multiple ? 1 : 0)
        }
    }

    static func nack(_ tag: UInt64) -> [UInt8] {
        method(60, 120, channel: 1) {
            $0.longlong(tag)
            $0.octet(0)
        }
    }

    /// Basic.Return and the returned message's content header and body, as RabbitMQ sends them.
    static func returned(messageId: String) -> [UInt8] {
        var bytes = method(60, 50, channel: 1) {
            $0.short(312)
            $0.shortString("NO_ROUTE")
            $0.shortString("appstore")
            $0.shortString("nowhere")
        }
        var message: [UInt8] = []
        AMQPOutgoing.publish(AMQPMessage(exchange: "appstore", routingKey: "nowhere", messageId: messageId, body: [1, 2]),
                             channel: 1, frameMax: 4096, into: &message)
        // Drop the publish method frame: a return carries the content header and body only.
        var parser = AMQPFrameParser()
        parser.feed(message)
        _ = try? parser.next()
        while let frame = try? parser.next() { frame.encode(into: &bytes) }
        return bytes
    }

    static func close(_ code: UInt16, _ text: String, channel: UInt16) -> [UInt8] {
        method(channel == 0 ? 10 : 20, 40 + (channel == 0 ? 10 : 0), channel: channel) {
            $0.short(code)
            $0.shortString(text)
            $0.short(60)
            $0.short(40)
        }
    }
}

struct AMQPPublisherStateMachineTests {
    typealias Machine = AMQPPublisherStateMachine<Int>

    private func configuration(heartbeat: Duration = .seconds(30)) throws -> AMQPConfiguration {
        var configuration = AMQPConfiguration(url: try AMQPURL.parse("amqp://relay:s3cret@127.0.0.1:5672/billing"))
        configuration.heartbeat = heartbeat
        configuration.publishTimeout = .seconds(5)
        return configuration
    }

    private func message(_ id: String, body: [UInt8] = Array("{}".utf8)) -> AMQPMessage {
        AMQPMessage(exchange: "appstore", routingKey: "Sandbox.TEST", messageId: id,
                    headers: [AMQPMessage.Header(name: "type", value: "TEST")], body: body)
    }

    /// The frames the client wrote in `actions`.
    private func written(_ actions: [Machine.Action]) -> [AMQPFrame] {
        var parser = AMQPFrameParser()
        for case .write(let bytes) in actions {
            parser.feed(bytes.starts(with: AMQPFrame.protocolHeader) ? Array(bytes.dropFirst(8)) : bytes)
        }
        var frames: [AMQPFrame] = []
        while let frame = try? parser.next() { frames.append(frame) }
        return frames
    }

    private func settled(_ actions: [Machine.Action]) -> [(Int, Result<Void, AMQPError>)] {
        actions.flatMap { action -> [(Int, Result<Void, AMQPError>)] in
            if case .settle(let list) = action { return list }
            return []
        }
    }

    private func closed(_ actions: [Machine.Action]) -> (AMQPError, [Int])? {
        for case .close(let error, let unsettled) in actions { return (error, unsettled) }
        return nil
    }

    private func methodIds(_ frames: [AMQPFrame]) -> [String] {
        frames.filter { $0.kind == .method }.map { "\(Int($0.payload[1])),\(Int($0.payload[3]))" }
    }

    private func ready(_ machine: inout Machine, now: DispatchTime, tune: [UInt8] = Broker.tune()) -> [Machine.Action] {
        _ = machine.open(now: now)
        var actions = machine.established(now: now)
        for bytes in [Broker.start(), tune, Broker.openOk, Broker.channelOpenOk, Broker.selectOk] {
            actions += machine.received(bytes, now: now)
        }
        return actions
    }

    @Test func theHandshakeAuthenticatesTunesOpensTheVhostAndTurnsOnConfirms() throws {
        var machine = Machine(configuration: try configuration())
        let now = DispatchTime.now()
        let actions = ready(&machine, now: now, tune: Broker.tune(frameMax: 8192, heartbeat: 60))
        guard case .write(let header) = actions.first else { Issue.record("no protocol header"); return }
        #expect(header == AMQPFrame.protocolHeader)
        let frames = written(actions)
        #expect(methodIds(frames) == ["10,11", "10,31", "10,40", "20,10", "85,10"])
        let startOk = frames[0].payload
        #expect(startOk.ends(with: [0, 0, 0, 13] + [0] + Array("relay".utf8) + [0] + Array("s3cret".utf8) + [5] + Array("en_US".utf8)))
        // TuneOk: the broker's channel-max, its smaller frame-max, our smaller heartbeat.
        #expect(Array(frames[1].payload.dropFirst(4)) == [0x07, 0xFF, 0, 0, 0x20, 0, 0, 30])
        #expect(Array(frames[2].payload.dropFirst(4).prefix(8)) == [7] + Array("billing".utf8))
        #expect(machine.state == .ready && machine.heartbeat == 30)
    }

    @Test func publishesMadeWhileConnectingGoOutOnceConfirmsAreOn() throws {
        var machine = Machine(configuration: try configuration())
        let now = DispatchTime.now()
        _ = machine.open(now: now)
        #expect(machine.publish(message("a"), waiter: 1, now: now).isEmpty)
        #expect(machine.publish(message("b"), waiter: 2, now: now).isEmpty)
        _ = machine.established(now: now)
        var actions: [Machine.Action] = []
        for bytes in [Broker.start(), Broker.tune(), Broker.openOk, Broker.channelOpenOk] { actions += machine.received(bytes, now: now) }
        #expect(!methodIds(written(actions)).contains("60,40"))
        let frames = written(machine.received(Broker.selectOk, now: now))
        #expect(methodIds(frames) == ["60,40", "60,40"])
        #expect(frames.map(\.kind) == [.method, .header, .body, .method, .header, .body])
        // Content header: class 60, body size 2, flags content-type|headers|delivery-mode|message-id.
        #expect(Array(frames[1].payload.prefix(14)) == [0, 60, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0xB0, 0x80])
        #expect(AMQPContentHeader.messageId(frames[1].payload) == "a")
    }

    @Test func aBodyIsSplitByTheNegotiatedFrameMax() throws {
        var machine = Machine(configuration: try configuration())
        let now = DispatchTime.now()
        _ = ready(&machine, now: now, tune: Broker.tune(frameMax: 4096))
        let body = (0..<10_000).map { UInt8($0 % 251) }
        let frames = written(machine.publish(message("big", body: body), waiter: 1, now: now))
        let bodies = frames.filter { $0.kind == .body }
        #expect(bodies.map(\.payload.count) == [4088, 4088, 1824])
        #expect(bodies.flatMap(\.payload) == body)
    }

    @Test func acksSettleByTagAndMultipleSettlesEveryEarlierTag() throws {
        var machine = Machine(configuration: try configuration())
        let now = DispatchTime.now()
        _ = ready(&machine, now: now)
        for index in 1...4 { _ = machine.publish(message("m\(index)"), waiter: index, now: now) }
        var results = settled(machine.received(Broker.ack(2), now: now))
        #expect(results.map(\.0) == [2])
        results = settled(machine.received(Broker.ack(3, multiple: true), now: now))
        #expect(results.map(\.0) == [1, 3])
        #expect(results.allSatisfy { (try? $0.1.get()) != nil })
        results = settled(machine.received(Broker.nack(4), now: now))
        guard case .failure(let error)? = results.first?.1 else { Issue.record("the nack did not refuse"); return }
        #expect(error.code == .refused)
        #expect(machine.unsettledCount == 0)
    }

    @Test func aReturnedMessageIsRefusedWhenItsAckArrives() throws {
        var machine = Machine(configuration: try configuration())
        let now = DispatchTime.now()
        _ = ready(&machine, now: now)
        _ = machine.publish(message("routed"), waiter: 1, now: now)
        _ = machine.publish(message("lost"), waiter: 2, now: now)
        #expect(settled(machine.received(Broker.returned(messageId: "lost"), now: now)).isEmpty)
        let results = settled(machine.received(Broker.ack(2, multiple: true), now: now))
        #expect(results.map(\.0) == [1, 2])
        #expect((try? results[0].1.get()) != nil)
        guard case .failure(let error) = results[1].1 else { Issue.record("the returned message was confirmed"); return }
        #expect(error.code == .refused && error.message.contains("312 NO_ROUTE") && error.message.contains("nowhere"))
    }

    @Test func anAckForNoOutstandingTagIsAProtocolError() throws {
        var machine = Machine(configuration: try configuration())
        let now = DispatchTime.now()
        _ = ready(&machine, now: now)
        #expect(closed(machine.received(Broker.ack(7), now: now))?.0.code == .protocolError)
    }

    @Test func aClosedChannelRefusesOrRetriesAsItsReplyCodeSays() throws {
        for (code, channel, expected) in [(UInt16(404), UInt16(1), AMQPError.Code.refused), (403, 0, .refused),
                                          (320, 0, .unavailable), (541, 1, .unavailable)] {
            var machine = Machine(configuration: try configuration())
            let now = DispatchTime.now()
            _ = ready(&machine, now: now)
            _ = machine.publish(message("a"), waiter: 1, now: now)
            let actions = machine.received(Broker.close(code, "NOT_FOUND - no exchange 'appstore' in vhost 'billing'", channel: channel), now: now)
            let ids = methodIds(written(actions))
            #expect(ids.first == (channel == 0 ? "10,51" : "20,41"), "the close is answered")
            guard let (error, unsettled) = closed(actions) else { Issue.record("\(code) did not close"); continue }
            #expect(error.code == expected, "\(code)")
            #expect(unsettled == [1])
            #expect(error.message.contains("\(code)"))
        }
    }

    @Test func aBrokerWithoutPlainOrOfAnotherVersionIsRefused() throws {
        var machine = Machine(configuration: try configuration())
        let now = DispatchTime.now()
        _ = machine.open(now: now)
        _ = machine.established(now: now)
        #expect(closed(machine.received(Broker.start(mechanisms: "EXTERNAL"), now: now))?.0.code == .refused)
        var other = Machine(configuration: try configuration())
        _ = other.open(now: now)
        _ = other.established(now: now)
        #expect(closed(other.received(Array("AMQP".utf8) + [0, 0, 10, 0], now: now))?.0.code == .protocolError)
    }

    @Test func anUnconfirmedPublishTimesOutAndTheHandshakeHasADeadline() throws {
        var machine = Machine(configuration: try configuration())
        let now = DispatchTime.now()
        _ = ready(&machine, now: now)
        _ = machine.publish(message("a"), waiter: 1, now: now)
        #expect(closed(machine.deadlinePassed(now: now.advanced(by: .seconds(1)))) == nil)
        #expect(closed(machine.deadlinePassed(now: now.advanced(by: .seconds(6))))?.0.code == .timeout)

        var slow = Machine(configuration: try configuration())
        _ = slow.open(now: now)
        _ = slow.publish(message("b"), waiter: 2, now: now)
        let (error, unsettled) = try #require(closed(slow.deadlinePassed(now: now.advanced(by: .seconds(11)))))
        #expect(error.code == .timeout && unsettled == [2])
    }

    @Test func heartbeatsGoOutWhenIdleAndASilentBrokerIsDropped() throws {
        var machine = Machine(configuration: try configuration(heartbeat: .seconds(10)))
        let now = DispatchTime.now()
        _ = ready(&machine, now: now, tune: Broker.tune(heartbeat: 60))
        #expect(written(machine.deadlinePassed(now: now.advanced(by: .seconds(2)))).isEmpty)
        let beat = written(machine.deadlinePassed(now: now.advanced(by: .seconds(5))))
        #expect(beat.map(\.kind) == [.heartbeat])
        _ = machine.received([8, 0, 0, 0, 0, 0, 0, 0xCE], now: now.advanced(by: .seconds(15)))
        #expect(closed(machine.deadlinePassed(now: now.advanced(by: .seconds(30)))) == nil)
        #expect(closed(machine.deadlinePassed(now: now.advanced(by: .seconds(36))))?.0.code == .unavailable)
    }

    @Test func theHeartbeatIsTheSmallerOneAndZeroTurnsItOff() throws {
        for (ours, broker, agreed) in [(30, 60, 30), (30, 10, 10), (30, 0, 30), (0, 60, 0), (0, 0, 0)] as [(Int64, UInt16, UInt16)] {
            var machine = Machine(configuration: try configuration(heartbeat: .seconds(ours)))
            let frames = written(ready(&machine, now: .now(), tune: Broker.tune(heartbeat: broker)))
            #expect(machine.heartbeat == agreed, "ours \(ours), broker's \(broker)")
            #expect(Array(frames[1].payload.suffix(2)) == [UInt8(agreed >> 8), UInt8(agreed & 0xFF)], "TuneOk says \(agreed)")
        }
    }

    @Test func theBrokersBytesInAnyChunkingSettleTheSame() throws {
        let stream = Broker.start() + Broker.tune() + Broker.openOk + Broker.channelOpenOk + Broker.selectOk
            + Broker.returned(messageId: "b") + Broker.ack(2, multiple: true) + Broker.nack(3)
        var outcomes: [[String]] = []
        for chunk in [1, 2, 5, 11, stream.count] {
            var machine = Machine(configuration: try configuration())
            let now = DispatchTime.now()
            _ = machine.open(now: now)
            for (index, id) in ["a", "b", "c"].enumerated() { _ = machine.publish(message(id), waiter: index + 1, now: now) }
            _ = machine.established(now: now)
            var results: [String] = []
            var offset = 0
            while offset < stream.count {
                let end = min(offset + chunk, stream.count)
                for (waiter, result) in settled(machine.received(stream[offset..<end], now: now)) {
                    results.append("\(waiter):\((try? result.get()) != nil ? "ok" : "refused")")
                }
                offset = end
            }
            outcomes.append(results)
        }
        #expect(outcomes.allSatisfy { $0 == ["1:ok", "2:refused", "3:refused"] }, "\(outcomes)")
    }
}

extension Array where Element == UInt8 {
    func ends(with suffix: [UInt8]) -> Bool { count >= suffix.count && Array(self[(count - suffix.count)...]) == suffix }
}
