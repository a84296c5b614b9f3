/// Why a publish was not confirmed. Compare on `code`: a refusal is the broker's answer about
/// this message (or this configuration) and trying again will get the same; the others are
/// worth another try.
public struct AMQPError: Error, Sendable, CustomStringConvertible {
    public enum Code: Sendable, Hashable {
        /// No connection: unreachable, closed, TLS failed, or a transient close by the broker
        /// (320 connection-forced, 541 internal-error...).
        case unavailable
        /// The broker did not confirm (or did not finish the handshake) in time.
        case timeout
        /// The broker refused: Basic.Nack, Basic.Return (no queue bound for the routing key),
        /// or a close with a lasting reply code (403 access refused, 404 no such exchange...).
        case refused
        /// The broker sent bytes that are not AMQP 0-9-1 as this client knows it.
        case protocolError
        /// The publisher was shut down.
        case shutdown
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
