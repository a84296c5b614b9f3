import Dispatch

/// Who may open a connection at the server's limits, and who gives way for it: the open
/// connections by client, and the rules. No I/O: `HTTPServer` tells it what opens, closes or
/// declines to leave, asks it about each newcomer, and closes what it says to shed.
///
/// A client is a `SocketAddress.addressGroup` (an IPv4 address or an IPv6 /64). The rules:
/// - At `maxPerClient` a client's newcomer takes the place of that client's oldest idle
///   connection, or is refused: refusing costs less than a new connection taking the place
///   of one of its own that is still sending.
/// - At `maxConnections` the heaviest client gives way, if it holds at least two connections
///   more than the newcomer's client: its slowest connection (the earliest
///   `ConnectionStanding`, idle or still sending its request) is shed for the newcomer. Of
///   equally heavy clients, the earliest standing of all goes; a client whose connections
///   all owe answers is passed over for the next heaviest. So tricklers from a few clients,
///   however fast they re-open what is shed, cannot keep out a client holding fewer; and
///   "two more" keeps two clients from shedding each other in turn.
/// - Otherwise the newcomer takes the place of its own client's oldest idle connection. A
///   client's first connection takes the slowest of the heaviest's even when every client
///   holds one (a crowd of single-connection clients is weighed by standing alone). Else it
///   is refused.
/// - A connection owing an answer never gives way.
struct ConnectionLimits {
    /// What to do with a newcomer.
    enum Decision: Equatable {
        /// Open it, after asking connection `shedding` (if any) to close; with `idleOnly`, only
        /// if that one is still idle when asked.
        case admit(shedding: Int?, idleOnly: Bool)
        case refuse(Refusal)
    }

    enum Refusal: Equatable {
        /// Its client holds `maxPerClient` connections, none idle.
        case clientLimit
        /// `maxConnections` are open, and none may give way to this client.
        case totalLimit
    }

    let maxConnections: Int
    let maxPerClient: Int
    private var clients: [String: Set<Int>] = [:]
    private var clientOf: [Int: String] = [:]
    /// Connections asked to close: they count until they have closed, but not against the
    /// limits (a connection that declines is counted again).
    private(set) var leaving: Set<Int> = []

    init(maxConnections: Int, maxPerClient: Int) {
        self.maxConnections = maxConnections
        self.maxPerClient = maxPerClient
    }

    /// Connections open and not leaving.
    var openCount: Int { clientOf.count - leaving.count }

    var isFull: Bool { openCount >= maxConnections }

    /// Whether any connection could give way at `maxConnections`; false when every one owes
    /// an answer (a newcomer then waits in the kernel backlog, served late, not refused).
    func anyCouldGiveWay(standing: (Int) -> ConnectionStanding?) -> Bool {
        clientOf.keys.contains { !leaving.contains($0) && standing($0) != nil }
    }

    /// Decides for a newcomer from `client`; a connection to shed is counted as leaving.
    mutating func admit(_ client: String, standing: (Int) -> ConnectionStanding?) -> Decision {
        let own = count(of: client)
        if own >= maxPerClient {
            guard let idle = earliest(of: client, idleOnly: true, standing) else { return .refuse(.clientLimit) }
            return shed(idle.id, idleOnly: true)
        }
        guard isFull else { return .admit(shedding: nil, idleOnly: false) }
        // The heaviest client that may give way and has a connection that can; of equally
        // heavy ones, the connection with the earliest standing.
        var chosen: (id: Int, count: Int, until: DispatchTime)?
        for client in clients.keys {
            let count = count(of: client)
            guard count >= own + 2 || (own == 0 && count > 0), count >= chosen?.count ?? 0,
                  let slowest = earliest(of: client, idleOnly: false, standing) else { continue }
            if let chosen, count == chosen.count && slowest.until >= chosen.until { continue }
            chosen = (slowest.id, count, slowest.until)
        }
        if let chosen { return shed(chosen.id, idleOnly: false) }
        if let idle = earliest(of: client, idleOnly: true, standing) { return shed(idle.id, idleOnly: true) }
        return .refuse(.totalLimit)
    }

    mutating func opened(_ id: Int, client: String) {
        clients[client, default: []].insert(id)
        clientOf[id] = client
    }

    mutating func closed(_ id: Int) {
        leaving.remove(id)
        guard let client = clientOf.removeValue(forKey: id) else { return }
        clients[client]?.remove(id)
        if clients[client]?.isEmpty == true { clients[client] = nil }
    }

    /// Connection `id` was asked to close and declined (its request became whole meanwhile).
    mutating func declined(_ id: Int) {
        leaving.remove(id)
    }

    /// Open connections of `client`, not counting those leaving.
    func count(of client: String) -> Int {
        guard let ids = clients[client] else { return 0 }
        return ids.count - leaving.reduce(0) { $0 + (ids.contains($1) ? 1 : 0) }
    }

    private mutating func shed(_ id: Int, idleOnly: Bool) -> Decision {
        leaving.insert(id)
        return .admit(shedding: id, idleOnly: idleOnly)
    }

    /// Of `client`'s connections not leaving (and idle, with `idleOnly`), the one with the
    /// earliest standing.
    private func earliest(
        of client: String, idleOnly: Bool, _ standing: (Int) -> ConnectionStanding?
    ) -> (id: Int, until: DispatchTime)? {
        var earliest: (id: Int, until: DispatchTime)?
        for id in clients[client] ?? [] where !leaving.contains(id) {
            guard let current = standing(id), current.isIdle || !idleOnly else { continue }
            if earliest.map({ current.earnedUntil < $0.until }) ?? true { earliest = (id, current.earnedUntil) }
        }
        return earliest
    }
}
