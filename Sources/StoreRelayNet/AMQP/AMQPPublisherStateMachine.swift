import Dispatch

/// The rules of one AMQP 0-9-1 publishing connection, without I/O (§2.2.4 connection, §1.8
/// Basic, RabbitMQ's publisher confirms extension): the handshake (protocol header,
/// Start/StartOk with PLAIN, Tune/TuneOk, Open, Channel.Open, Confirm.Select), then publishes
/// each numbered by the channel's next delivery tag and settled by the broker's Basic.Ack or
/// Basic.Nack for it (`multiple` settles every tag up to it). A publish is `mandatory`: when no
/// queue takes it, the broker sends Basic.Return (with the message's content header, whose
/// message-id says which publish it was) before its ack, and the publish is refused.
///
/// Publishes made while connecting wait and go out once confirms are on. A close by the broker
/// (Connection.Close or Channel.Close) ends the connection: every publish not yet settled fails,
/// refused or unavailable as the reply code says; the owner opens a new connection for the
/// next publish. Heartbeats as `AMQPConfiguration.heartbeat` says. `AMQPPublisher` feeds it
/// its `OutboundConnection`'s events and performs the actions; tests feed it bytes directly.
struct AMQPPublisherStateMachine<Waiter> {
    enum State: Equatable { case connecting, awaitingStart, awaitingTune, awaitingOpen, awaitingChannel, awaitingConfirms, ready, closed }

    enum Action {
        /// Write these bytes.
        case write([UInt8])
        /// The one timer's new deadline.
        case setDeadline(DispatchTime)
        /// These publishes are settled: confirmed (success) or not.
        case settle([(Waiter, Result<Void, AMQPError>)])
        /// Close the connection; every publish still unsettled fails with the error.
        case close(AMQPError, unsettled: [Waiter])
    }

    private struct Pending {
        var tag: UInt64
        var messageId: String
        var waiter: Waiter
        var deadline: DispatchTime
        /// The broker returned it (unroutable): its ack then means refused.
        var returned: AMQPReply?
    }

    private struct Queued {
        var message: AMQPMessage
        var waiter: Waiter
        var deadline: DispatchTime
    }

    static var channel: UInt16 { 1 }

    private(set) var state = State.connecting
    private let configuration: AMQPConfiguration
    private var parser: AMQPFrameParser
    private var queued: [Queued] = []
    private var pending: [Pending] = []
    private var nextTag: UInt64 = 1
    private var frameMax: Int
    /// Negotiated heartbeat in seconds; 0: none.
    private(set) var heartbeat: UInt16 = 0
    private var connectDeadline = DispatchTime.distantFuture
    private var lastSent = DispatchTime.now()
    private var lastReceived = DispatchTime.now()
    /// A Basic.Return was read; its content header, next, names the message.
    private var returning: AMQPReply?

    init(configuration: AMQPConfiguration) {
        self.configuration = configuration
        frameMax = configuration.maxFrameSize
        parser = AMQPFrameParser(maxFrameSize: configuration.maxFrameSize)
    }

    private var peer: String { configuration.url.description }

    /// Publishes not yet settled (queued or sent).
    var unsettledCount: Int { queued.count + pending.count }

    // MARK: Events

    /// Opening starts: resolution, connect, TLS and the handshake must be done in time.
    mutating func open(now: DispatchTime) -> [Action] {
        connectDeadline = now.advanced(by: configuration.connectTimeout)
        return [.setDeadline(connectDeadline)]
    }

    /// Connected (TLS established, for amqps): the protocol header goes out.
    mutating func established(now: DispatchTime) -> [Action] {
        guard state == .connecting else { return [] }
        state = .awaitingStart
        lastSent = now
        lastReceived = now
        return [.write(AMQPFrame.protocolHeader)]
    }

    /// A message to publish, with who waits for its confirmation.
    mutating func publish(_ message: AMQPMessage, waiter: Waiter, now: DispatchTime) -> [Action] {
        let deadline = now.advanced(by: configuration.publishTimeout)
        switch state {
        case .closed:
            return [.settle([(waiter, .failure(AMQPError(.unavailable, "the connection to \(peer) is closed")))])]
        case .ready:
            var bytes: [UInt8] = []
            send(message, waiter: waiter, deadline: deadline, into: &bytes)
            lastSent = now
            return [.write(bytes), .setDeadline(nextDeadline())]
        default:
            queued.append(Queued(message: message, waiter: waiter, deadline: deadline))
            return []
        }
    }

    /// Bytes arrived.
    mutating func received(_ bytes: some Sequence<UInt8>, now: DispatchTime) -> [Action] {
        guard state != .closed, state != .connecting else { return [] }
        lastReceived = now
        parser.feed(bytes)
        var actions: [Action] = []
        while state != .closed {
            let frame: AMQPFrame
            do {
                guard let next = try parser.next() else { break }
                frame = next
            } catch {
                actions += close(AMQPError(.protocolError, "\(peer) sent bytes that are not AMQP 0-9-1 frames: \(error)"))
                return actions
            }
            actions += handle(frame, now: now)
        }
        if state != .closed { actions.append(.setDeadline(nextDeadline())) }
        return actions
    }

    /// The timer fired: the handshake's, the oldest publish's or a heartbeat's deadline.
    mutating func deadlinePassed(now: DispatchTime) -> [Action] {
        guard state != .closed else { return [] }
        if state != .ready {
            if now >= connectDeadline {
                return close(AMQPError(.timeout, "no AMQP connection to \(peer) within \(configuration.connectTimeout)"))
            }
            return [.setDeadline(nextDeadline())]
        }
        if let oldest = pending.first, now >= oldest.deadline {
            return close(AMQPError(.timeout, "\(peer) did not confirm a publish within \(configuration.publishTimeout)"))
        }
        var actions: [Action] = []
        if heartbeat > 0 {
            let interval = Duration.seconds(Int(heartbeat))
            if now >= lastReceived.advanced(by: interval * 2) {
                return close(AMQPError(.unavailable, "\(peer) sent nothing for two heartbeat intervals (\(interval * 2))"))
            }
            if now >= lastSent.advanced(by: interval / 2) {
                var bytes: [UInt8] = []
                AMQPOutgoing.heartbeat.encode(into: &bytes)
                lastSent = now
                actions.append(.write(bytes))
            }
        }
        actions.append(.setDeadline(nextDeadline()))
        return actions
    }

    /// The peer closed its side.
    mutating func inputEnded() -> [Action] {
        close(AMQPError(.unavailable, "\(peer) closed the connection"))
    }

    /// The driver failed (and closed).
    mutating func failed(_ error: OutboundError) -> [Action] {
        if error.endOfStream { return inputEnded() }
        return close(AMQPError(.unavailable, "connection to \(peer) failed: \(error.message)"))
    }

    /// Ends the connection as if it had failed with `error`; nothing when it already ended.
    mutating func close(_ error: AMQPError) -> [Action] {
        guard state != .closed else { return [] }
        state = .closed
        let unsettled = pending.map(\.waiter) + queued.map(\.waiter)
        pending = []
        queued = []
        return [.close(error, unsettled: unsettled)]
    }

    // MARK: Frames

    private mutating func handle(_ frame: AMQPFrame, now: DispatchTime) -> [Action] {
        switch frame.kind {
        case .heartbeat:
            return []
        case .header:
            guard frame.channel == Self.channel, let reply = returning else { return [] }
            returning = nil
            if let messageId = AMQPContentHeader.messageId(frame.payload),
               let index = pending.firstIndex(where: { $0.messageId == messageId && $0.returned == nil }) {
                pending[index].returned = reply
            }
            return []
        case .body:
            // Only a returned message's content comes to a publisher; its body is not needed.
            return []
        case .method:
            let method: AMQPIncoming
            do {
                method = try AMQPIncoming.decode(frame.payload)
            } catch {
                return close(AMQPError(.protocolError, "\(peer) sent a malformed method: \(error)"))
            }
            return handle(method, channel: frame.channel, now: now)
        }
    }

    private mutating func handle(_ method: AMQPIncoming, channel: UInt16, now: DispatchTime) -> [Action] {
        switch (method, state) {
        case (.connectionStart(let major, let minor, let mechanisms), .awaitingStart) where channel == 0:
            guard major == 0, minor == 9 else {
                return close(AMQPError(.protocolError, "\(peer) speaks AMQP \(major)-\(minor), not 0-9-1"))
            }
            guard mechanisms.split(separator: " ").contains("PLAIN") else {
                return close(AMQPError(.refused, "\(peer) does not offer PLAIN authentication (it offers \(mechanisms))"))
            }
            state = .awaitingTune
            let url = configuration.url
            return write([AMQPOutgoing.startOk(user: url.user, password: url.password, product: configuration.product)], now: now)
        case (.connectionSecure, _):
            return close(AMQPError(.refused, "\(peer) sent a SASL challenge, which PLAIN never gets"))
        case (.connectionTune(let channelMax, let serverFrameMax, let serverHeartbeat), .awaitingTune) where channel == 0:
            // Either side's 0 means "no limit": take the other's, else the smaller.
            let ours = configuration.maxFrameSize
            frameMax = serverFrameMax == 0 ? ours : min(Int(serverFrameMax), ours)
            frameMax = max(frameMax, 4096)
            parser.maxFrameSize = frameMax
            // Our 0 turns heartbeats off (the broker goes by TuneOk); the broker's 0 leaves ours.
            let wanted = UInt16(clamping: configuration.heartbeat.components.seconds)
            heartbeat = wanted == 0 ? 0 : (serverHeartbeat == 0 ? wanted : min(serverHeartbeat, wanted))
            state = .awaitingOpen
            return write([
                AMQPOutgoing.tuneOk(channelMax: channelMax, frameMax: UInt32(frameMax), heartbeat: heartbeat),
                AMQPOutgoing.open(virtualHost: configuration.url.virtualHost),
            ], now: now)
        case (.connectionOpenOk, .awaitingOpen) where channel == 0:
            state = .awaitingChannel
            return write([AMQPOutgoing.channelOpen(Self.channel)], now: now)
        case (.channelOpenOk, .awaitingChannel) where channel == Self.channel:
            state = .awaitingConfirms
            return write([AMQPOutgoing.confirmSelect(Self.channel)], now: now)
        case (.confirmSelectOk, .awaitingConfirms) where channel == Self.channel:
            state = .ready
            connectDeadline = .distantFuture
            let waiting = queued
            queued = []
            guard !waiting.isEmpty else { return [] }
            var bytes: [UInt8] = []
            for entry in waiting { send(entry.message, waiter: entry.waiter, deadline: entry.deadline, into: &bytes) }
            lastSent = now
            return [.write(bytes)]
        case (.basicAck(let tag, let multiple), .ready) where channel == Self.channel:
            let peer = peer
            return settle(upTo: tag, multiple: multiple) { entry in
                guard let reply = entry.returned else { return .success(()) }
                return .failure(AMQPError(.refused, "\(peer) returned the message: \(reply) (exchange '\(reply.exchange)', "
                    + "routing key '\(reply.routingKey)'; no queue is bound for it)"))
            }
        case (.basicNack(let tag, let multiple), .ready) where channel == Self.channel:
            let peer = peer
            return settle(upTo: tag, multiple: multiple) { _ in
                .failure(AMQPError(.refused, "\(peer) refused the message (Basic.Nack)"))
            }
        case (.basicReturn(let reply), .ready) where channel == Self.channel:
            returning = reply
            return []
        case (.connectionBlocked(let reason), _):
            configuration.logger.warning("\(peer) blocks publishing: \(reason)")
            return []
        case (.connectionUnblocked, _):
            configuration.logger.info("\(peer) takes publishes again")
            return []
        case (.connectionClose(let reply), _):
            let ok = write([AMQPOutgoing.closeOk()], now: now)
            return ok + close(closeError(reply, what: "connection"))
        case (.channelClose(let reply), _):
            let ok = write([AMQPOutgoing.channelCloseOk(channel), AMQPOutgoing.close(code: 200, text: "channel closed by the broker")], now: now)
            return ok + close(closeError(reply, what: "channel"))
        default:
            return close(AMQPError(.protocolError, "\(peer) sent \(method) on channel \(channel), unexpected while \(state)"))
        }
    }

    private func closeError(_ reply: AMQPReply, what: String) -> AMQPError {
        let cause = reply.classId == 0 ? "" : " (after method \(reply.classId),\(reply.methodId))"
        return AMQPError(reply.isTransient ? .unavailable : .refused, "\(peer) closed the \(what): \(reply)\(cause)")
    }

    /// Settles the publish numbered `tag`, or with `multiple` every one up to it.
    private mutating func settle(upTo tag: UInt64, multiple: Bool,
                                 _ result: (Pending) -> Result<Void, AMQPError>) -> [Action] {
        var settled: [(Waiter, Result<Void, AMQPError>)] = []
        if multiple {
            let count = pending.prefix { $0.tag <= tag }.count
            for entry in pending.prefix(count) { settled.append((entry.waiter, result(entry))) }
            pending.removeFirst(count)
        } else if let index = pending.firstIndex(where: { $0.tag == tag }) {
            settled.append((pending[index].waiter, result(pending[index])))
            pending.remove(at: index)
        }
        guard !settled.isEmpty else {
            return close(AMQPError(.protocolError, "\(peer) confirmed delivery tag \(tag), which is not outstanding"))
        }
        return [.settle(settled)]
    }

    private mutating func send(_ message: AMQPMessage, waiter: Waiter, deadline: DispatchTime, into bytes: inout [UInt8]) {
        AMQPOutgoing.publish(message, channel: Self.channel, frameMax: frameMax, into: &bytes)
        pending.append(Pending(tag: nextTag, messageId: message.messageId, waiter: waiter, deadline: deadline))
        nextTag += 1
    }

    private mutating func write(_ frames: [AMQPFrame], now: DispatchTime) -> [Action] {
        var bytes: [UInt8] = []
        for frame in frames { frame.encode(into: &bytes) }
        lastSent = now
        return [.write(bytes)]
    }

    /// The earliest of: the handshake's end, the oldest publish's confirmation, the next
    /// heartbeat to send and the latest a broker's may arrive.
    private func nextDeadline() -> DispatchTime {
        var next = state == .ready ? DispatchTime.distantFuture : connectDeadline
        if let oldest = pending.first { next = min(next, oldest.deadline) }
        if state == .ready, heartbeat > 0 {
            let interval = Duration.seconds(Int(heartbeat))
            next = min(next, lastSent.advanced(by: interval / 2), lastReceived.advanced(by: interval * 2))
        }
        return next
    }
}
