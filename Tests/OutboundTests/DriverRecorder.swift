import Dispatch
import Foundation
import StoreRelayCore
@testable import StoreRelayNet
import StoreRelayTestSupport

/// One `OutboundConnection` driven from a test, with everything it told its client recorded in
/// order. `react` runs on the connection's queue after each event is recorded: what a
/// protocol client would do.
final class DriverRecorder: Sendable {
    enum Heard: Equatable {
        case resolved, established, received, inputEnded, deadline
        case failed(OutboundError.Code)
    }

    let queue = DispatchQueue(label: "storerelay.test.outbound")
    let heard = Locked<[Heard]>([])
    let bytes = Locked<[UInt8]>([])
    let failure = Locked<OutboundError?>(nil)
    let connection: OutboundConnection

    init(
        _ endpoint: OutboundEndpoint, connector: OutboundConnector = OutboundConnector(),
        react: @escaping @Sendable (OutboundEvent, OutboundConnection) -> Void = { _, _ in }
    ) {
        let (heard, bytes, failure) = (heard, bytes, failure)
        let box = Locked<OutboundConnection?>(nil)
        connection = OutboundConnection(
            to: endpoint, peer: "\(endpoint.host):\(endpoint.port)", connector: connector, queue: queue, logger: .disabled
        ) { event in
            switch event {
            case .resolved: heard.withLock { $0.append(.resolved) }
            case .established: heard.withLock { $0.append(.established) }
            case .received(let chunk):
                bytes.withLock { $0 += chunk }
                heard.withLock { if $0.last != .received { $0.append(.received) } }
            case .inputEnded: heard.withLock { $0.append(.inputEnded) }
            case .deadline: heard.withLock { $0.append(.deadline) }
            case .failed(let error):
                failure.withLock { $0 = error }
                heard.withLock { $0.append(.failed(error.code)) }
            }
            if let connection = box.current { react(event, connection) }
        }
        box.withLock { $0 = connection }
    }

    /// Runs `body` with the connection on its queue.
    func run(_ body: @escaping @Sendable (OutboundConnection) -> Void) {
        let connection = connection
        queue.async { body(connection) }
    }

    /// Writes `text` (held until established), then opens.
    func open(writing text: String = "") {
        run { connection in
            connection.write(Array(text.utf8))
            connection.open()
        }
    }

    var text: String { String(decoding: bytes.current, as: UTF8.self) }

    /// Whether the connection's phase, read on its queue, is `phase`.
    func isInPhase(_ phase: OutboundConnection.Phase) -> Bool {
        queue.sync { connection.phase == phase }
    }
}

/// A resolver that answers from a table and counts what it was asked.
final class TableResolver: HostResolver {
    let table: [String: [SocketAddress]]
    let asked = Locked<[String]>([])

    init(_ table: [String: [SocketAddress]]) {
        self.table = table
    }

    struct NoSuchHost: Error, CustomStringConvertible {
        var host: String
        var description: String { "no such host \(host)" }
    }

    func resolve(host: String, port: UInt16) throws -> [SocketAddress] {
        asked.withLock { $0.append(host) }
        guard let addresses = table[host] else { throw NoSuchHost(host: host) }
        return addresses
    }
}

func loopback(_ port: UInt16) -> SocketAddress {
    SocketAddress(ip: "127.0.0.1", port: port)!
}

/// A loopback port with nothing listening on it: a connection there is refused.
func closedLoopbackPort() throws -> UInt16 {
    UInt16(try RedisServerProcess.freePort())
}
