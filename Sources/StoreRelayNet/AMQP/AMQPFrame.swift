/// One AMQP 0-9-1 frame (spec §2.3.5, §4.2.3): a type, a channel, a payload, and the frame-end
/// octet `0xCE` after it on the wire. StoreRelay uses one channel (1) besides the connection's
/// own (0).
public struct AMQPFrame: Sendable, Hashable {
    public enum Kind: UInt8, Sendable, Hashable {
        case method = 1
        case header = 2
        case body = 3
        case heartbeat = 8
    }

    public var kind: Kind
    public var channel: UInt16
    public var payload: [UInt8]

    public init(_ kind: Kind, channel: UInt16, payload: [UInt8]) {
        self.kind = kind
        self.channel = channel
        self.payload = payload
    }

    /// The protocol header a client sends first (§4.2.2): `AMQP` 0 0 9 1.
    public static let protocolHeader: [UInt8] = Array("AMQP".utf8) + [0, 0, 9, 1]

    /// Bytes around a payload: type, channel, size before; frame-end after.
    public static let overhead = 8
    static let frameEnd: UInt8 = 0xCE

    /// Appends the frame as it goes on the wire.
    public func encode(into bytes: inout [UInt8]) {
        bytes.append(kind.rawValue)
        bytes.append(UInt8(channel >> 8))
        bytes.append(UInt8(channel & 0xFF))
        let size = UInt32(payload.count)
        bytes += [UInt8(size >> 24), UInt8((size >> 16) & 0xFF), UInt8((size >> 8) & 0xFF), UInt8(size & 0xFF)]
        bytes += payload
        bytes.append(Self.frameEnd)
    }
}
