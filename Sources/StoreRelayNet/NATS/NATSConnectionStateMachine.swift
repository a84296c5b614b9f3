import Dispatch
import StoreRelayCore

/// The rules of one NATS connection that publishes to JetStream, without I/O (NATS "Client
/// Protocol", "JetStream wire API"): wait for the server's INFO, upgrade to TLS when the URL
/// or the server asks for it, send CONNECT (headers and no-responders on), subscribe to the
/// client's reply inbox and PING; the PONG says CONNECT was accepted. From then on each
/// publish is an `HPUB` whose reply subject is `<inbox>.<n>`, and the message that comes back
/// there (a PubAck, an error PubAck, or a 503 "no responders" status) answers publish `n`.
/// `NATSConnection` feeds it its `OutboundConnection`'s events and performs the actions;
/// tests feed it bytes directly.
///
/// `Waiter` stands for a caller waiting for one answer (a completion in `NATSConnection`, a
/// number in tests). Time comes in with each event that needs it.
struct NATSConnectionStateMachine<Waiter> {
    enum State: Equatable { case connecting, awaitingInfo, upgrading, awaitingPong, ready, closed }

    enum Action {
        case send([UInt8])
        /// Start TLS on the connection now; `established` again follows the handshake.
        case startTLS
        /// The timer's new deadline (`.distantFuture`: none).
        case setDeadline(DispatchTime)
        case deliver(Waiter, NATSPublishAnswer)
        /// These publishes cannot be sent (the connection is closed).
        case fail([Waiter], NATSError)
        /// Close the connection; every waiter still unanswered fails with the error.
        case close(NATSError, unanswered: [Waiter])
    }

    private struct Pending {
        var waiter: Waiter
        var subject: String
        var deadline: DispatchTime
        /// The HPUB, kept until the connection is ready to send it.
        var bytes: [UInt8]?
        var size: Int
    }

    private(set) var state = State.connecting
    private let configuration: NATSConfiguration
    private var parser: NATSParser
    /// `_INBOX.<random>`: replies come to `<inbox>.<n>`.
    let inbox: String
    private var nextNumber: UInt64 = 1
    /// Publishes not yet answered by number; those with `bytes` wait for `ready`.
    private var pending: [UInt64: Pending] = [:]
    private var connectDeadline = DispatchTime.distantFuture
    private var usesTLS = false
    private var info = NATSServerInfo()

    /// The subscription id of the reply inbox (the only subscription).
    static var inboxSid: String { "1" }

    init(configuration: NATSConfiguration, inboxToken: String) {
        self.configuration = configuration
        parser = NATSParser(limits: configuration.parserLimits)
        inbox = "_INBOX." + inboxToken
    }

    private var origin: String { configuration.url.description }

    /// Opening starts: resolution, connect, TLS, INFO and CONNECT must be done in time.
    mutating func open(now: DispatchTime) -> [Action] {
        connectDeadline = now.advanced(by: configuration.connectTimeout)
        return [.setDeadline(connectDeadline)]
    }

    /// TCP connected (`connecting`), or the TLS upgrade finished (`upgrading`).
    mutating func established() -> [Action] {
        switch state {
        case .connecting:
            state = .awaitingInfo
            return []
        case .upgrading:
            usesTLS = true
            return greet()
        default:
            return []
        }
    }

    /// Queues a publish of `message` (sent at once when ready), answered by `deadline`.
    mutating func publish(_ message: NATSPublish, waiter: Waiter, deadline: DispatchTime) -> [Action] {
        guard state != .closed else {
            return [.fail([waiter], NATSError(.connection, "the connection to \(origin) is closed"))]
        }
        let number = nextNumber
        nextNumber += 1
        let bytes = message.encoded(replyTo: "\(inbox).\(number)")
        let entry = Pending(waiter: waiter, subject: message.subject, deadline: deadline, bytes: bytes, size: message.size)
        guard state == .ready else {
            pending[number] = entry
            return []
        }
        if entry.size > info.maxPayload {
            return [.deliver(waiter, .refused(Self.tooLarge(entry.size, info.maxPayload)))]
        }
        pending[number] = Pending(waiter: waiter, subject: message.subject, deadline: deadline, bytes: nil, size: entry.size)
        return [.send(bytes), .setDeadline(earliestDeadline)]
    }

    /// Bytes arrived: every action the operations in them call for, in order.
    mutating func received(_ bytes: some Collection<UInt8>, now: DispatchTime) -> [Action] {
        guard state != .closed else { return [] }
        parser.append(bytes)
        var actions: [Action] = []
        while state != .closed {
            let message: NATSServerMessage?
            do throws(NATSError) {
                message = try parser.next()
            } catch {
                actions += close(error)
                break
            }
            guard let message else { break }
            actions += handle(message, now: now)
            // A TLS upgrade reads the rest through the new transport: stop here.
            if state == .upgrading { break }
        }
        return actions
    }

    /// The timer fired: before `ready`, the connect took too long; after, a publish whose
    /// deadline passed ends the connection, as a Redis command's does. A server that stopped
    /// answering (a half-open connection, a hung host) would leave every later publish to
    /// time out on the same socket; a new connection either works or says why. The other
    /// unanswered publishes fail with it and are retried, deduplicated by `Nats-Msg-Id`.
    mutating func deadlinePassed(now: DispatchTime) -> [Action] {
        switch state {
        case .closed: return []
        case .ready:
            guard earliestDeadline <= now else { return [.setDeadline(earliestDeadline)] }
            return close(NATSError(.timeout, "\(origin) sent no PubAck in time"))
        default:
            guard now >= connectDeadline else { return [.setDeadline(connectDeadline)] }
            return close(NATSError(.timeout, "connecting to \(origin) took longer than \(configuration.connectTimeout)"))
        }
    }

    /// The server closed its side: nothing unanswered will be.
    mutating func inputEnded() -> [Action] {
        close(NATSError(.connection, "\(origin) closed the connection"))
    }

    /// The driver failed (and closed the connection).
    mutating func failed(_ error: OutboundError) -> [Action] {
        close(NATSError(.connection, error.message))
    }

    /// Ends the connection: every waiter unanswered fails with `error`.
    mutating func close(_ error: NATSError) -> [Action] {
        guard state != .closed else { return [] }
        state = .closed
        let unanswered = pending.sorted { $0.key < $1.key }.map(\.value.waiter)
        pending = [:]
        return [.close(error, unanswered: unanswered)]
    }

    // MARK: Operations

    private mutating func handle(_ message: NATSServerMessage, now: DispatchTime) -> [Action] {
        switch message {
        case .ping:
            return [.send(Array("PONG\r\n".utf8))]
        case .ok:
            return []
        case .info(let info):
            guard state == .awaitingInfo else { return [] }  // later INFOs announce cluster changes
            self.info = info
            guard info.headers else {
                return close(NATSError(.refused, "\(origin) does not support message headers (NATS 2.2 or later is needed)"))
            }
            if configuration.url.requiresTLS || info.tlsRequired {
                guard info.tlsRequired || info.tlsAvailable else {
                    return close(NATSError(.refused, "\(origin) does not offer TLS, which the tls:// URL requires"))
                }
                state = .upgrading
                return [.startTLS]
            }
            return greet()
        case .pong:
            guard state == .awaitingPong else { return [] }
            state = .ready
            return sendWaiting()
        case .error(let text):
            return serverError(text)
        case .message(let message):
            return answer(message)
        }
    }

    /// CONNECT, the inbox subscription and a PING whose PONG confirms both.
    private mutating func greet() -> [Action] {
        state = .awaitingPong
        var bytes = configuration.connectCommand(tls: usesTLS)
        bytes += Array("\r\nSUB \(inbox).* \(Self.inboxSid)\r\nPING\r\n".utf8)
        return [.send(bytes)]
    }

    /// Ready: the publishes that waited go out, in the order they came.
    private mutating func sendWaiting() -> [Action] {
        var actions: [Action] = []
        var bytes: [UInt8] = []
        for number in pending.keys.sorted() {
            guard var entry = pending[number], let message = entry.bytes else { continue }
            if entry.size > info.maxPayload {
                pending[number] = nil
                actions.append(.deliver(entry.waiter, .refused(Self.tooLarge(entry.size, info.maxPayload))))
                continue
            }
            bytes += message
            entry.bytes = nil
            pending[number] = entry
        }
        if !bytes.isEmpty { actions.append(.send(bytes)) }
        actions.append(.setDeadline(earliestDeadline))
        return actions
    }

    /// `-ERR`: a permissions violation refuses the publishes to that subject and the
    /// connection goes on; any other error ends the connection (the server closes it).
    private mutating func serverError(_ text: String) -> [Action] {
        let lower = text.lowercased()
        if state == .ready, lower.hasPrefix("permissions violation for publish to") {
            let quoted = text.dropFirst("permissions violation for publish to".count).drop { $0 == " " }
            let subject = quoted.hasPrefix("\"") && quoted.hasSuffix("\"") && quoted.count >= 2
                ? String(quoted.dropFirst().dropLast()) : String(quoted)
            let refused = pending.filter { $0.value.subject == subject }.sorted { $0.key < $1.key }
            for (number, _) in refused { pending[number] = nil }
            return refused.map { .deliver($0.value.waiter, .refused("\(origin) refused the publish: \(text)")) }
        }
        let code: NATSError.Code = state == .ready ? .connection : .refused
        return close(NATSError(code, "\(origin) answered -ERR '\(text.prefix(200))'"))
    }

    /// A message on the reply inbox answers the publish its subject's last token numbers.
    private mutating func answer(_ message: NATSInboundMessage) -> [Action] {
        guard message.sid == Self.inboxSid, message.subject.hasPrefix(inbox + "."),
              let number = UInt64(message.subject.dropFirst(inbox.count + 1)),
              let entry = pending[number], entry.bytes == nil
        else { return [] }  // late (timed out), or not ours
        pending[number] = nil
        return [.deliver(entry.waiter, NATSPublishAnswer(reply: message, subject: entry.subject))]
    }

    private static func tooLarge(_ size: Int, _ limit: Int) -> String {
        "the message of \(size) bytes exceeds the server's max_payload of \(limit) bytes"
    }

    /// The soonest deadline of a sent publish (`.distantFuture`: none).
    private var earliestDeadline: DispatchTime {
        pending.values.lazy.filter { $0.bytes == nil }.map(\.deadline).min() ?? .distantFuture
    }
}
