import Dispatch
import Testing
@testable import StoreRelayNet

/// The rules of who gives way at a connection limit, without sockets (`ConnectionLimits`).
@Suite struct ConnectionLimitsTests {
    /// Connections by id with the standing each publishes (nil: owes an answer).
    struct Table {
        var limits: ConnectionLimits
        var standings: [Int: ConnectionStanding?] = [:]
        var nextID = 0

        init(maxConnections: Int, maxPerClient: Int) {
            limits = ConnectionLimits(maxConnections: maxConnections, maxPerClient: maxPerClient)
        }

        /// Opens a connection of `client`; returns its id.
        @discardableResult
        mutating func open(_ client: String, _ standing: ConnectionStanding?) -> Int {
            nextID += 1
            limits.opened(nextID, client: client)
            standings[nextID] = standing
            return nextID
        }

        mutating func admit(_ client: String) -> ConnectionLimits.Decision {
            let standings = standings
            return limits.admit(client) { standings[$0] ?? nil }
        }
    }

    static func idle(since seconds: UInt64) -> ConnectionStanding {
        ConnectionStanding(isIdle: true, earnedUntil: DispatchTime(uptimeNanoseconds: seconds * 1_000_000_000))
    }

    static func receiving(since seconds: UInt64, bytes: Int = 0) -> ConnectionStanding {
        .receiving(since: DispatchTime(uptimeNanoseconds: seconds * 1_000_000_000), bytes: bytes, creditRate: 100)
    }

    @Test func bytesReceivedEarnTimeAtTheCreditRate() {
        let standing = ConnectionStanding.receiving(since: DispatchTime(uptimeNanoseconds: 5_000_000_000), bytes: 250, creditRate: 100)
        #expect(standing.earnedUntil.uptimeNanoseconds == 7_500_000_000)
        #expect(!standing.isIdle)
        let uncredited = ConnectionStanding.receiving(since: DispatchTime(uptimeNanoseconds: 5_000_000_000), bytes: 250, creditRate: 0)
        #expect(uncredited.earnedUntil.uptimeNanoseconds == 5_000_000_000)
    }

    @Test func belowTheLimitsEveryoneIsAdmitted() {
        var table = Table(maxConnections: 3, maxPerClient: 2)
        table.open("a", Self.receiving(since: 1))
        #expect(table.admit("a") == .admit(shedding: nil, idleOnly: false))
    }

    @Test func aClientAtItsLimitReplacesItsOldestIdleConnectionOrIsRefused() {
        var table = Table(maxConnections: 100, maxPerClient: 3)
        table.open("a", Self.idle(since: 5))
        let oldestIdle = table.open("a", Self.idle(since: 2))
        table.open("a", Self.receiving(since: 1))
        table.open("b", Self.idle(since: 0))
        #expect(table.admit("a") == .admit(shedding: oldestIdle, idleOnly: true))
        table.limits.opened(99, client: "a")
        // Now: one idle left (since 5); then only the receiving one, which stays.
        #expect(table.admit("a") == .admit(shedding: 1, idleOnly: true))
        table.limits.opened(100, client: "a")
        #expect(table.admit("a") == .refuse(.clientLimit))
    }

    /// Tricklers from one client hold every slot; a newcomer from another takes the place of
    /// the trickler that has earned its place least, not of an older connection of a
    /// lighter client, nor of the trickler that has just connected.
    @Test func atTheTotalLimitTheHeaviestClientsSlowestConnectionGivesWay() {
        var table = Table(maxConnections: 5, maxPerClient: 100)
        let lighter = table.open("b", Self.receiving(since: 1))
        table.open("a", Self.receiving(since: 9))
        let slowest = table.open("a", Self.receiving(since: 3, bytes: 100))   // earned until 4
        table.open("a", Self.receiving(since: 2, bytes: 300))                 // earned until 5
        table.open("a", Self.idle(since: 8))
        #expect(table.admit("c") == .admit(shedding: slowest, idleOnly: false))
        #expect(table.limits.leaving == [slowest])
        #expect(!table.limits.leaving.contains(lighter))
    }

    @Test func aConnectionOwingAnAnswerNeverGivesWay() {
        var table = Table(maxConnections: 2, maxPerClient: 100)
        table.open("a", nil)
        table.open("a", nil)
        let standings = table.standings
        #expect(!table.limits.anyCouldGiveWay { standings[$0] ?? nil })
        #expect(table.admit("c") == .refuse(.totalLimit))
        // The heaviest owes every answer: the next heaviest gives way.
        var mixed = Table(maxConnections: 3, maxPerClient: 100)
        mixed.open("a", nil)
        mixed.open("a", nil)
        let trickler = mixed.open("b", Self.receiving(since: 1))
        #expect(mixed.admit("c") == .admit(shedding: trickler, idleOnly: false))
    }

    /// A client may not take the place of a connection of a client holding about as many
    /// (or the two would shed each other in turn, as fast as they re-open); it may replace
    /// its own idle ones.
    @Test func clientsHoldingAboutAsManyDoNotShedEachOther() {
        var table = Table(maxConnections: 5, maxPerClient: 100)
        table.open("a", Self.receiving(since: 1))
        table.open("a", Self.receiving(since: 2))
        table.open("b", Self.receiving(since: 3))
        table.open("b", Self.receiving(since: 4))
        table.open("b", Self.receiving(since: 5))
        #expect(table.admit("a") == .refuse(.totalLimit))
        let idle = table.open("a", Self.idle(since: 6))
        #expect(table.admit("a") == .admit(shedding: idle, idleOnly: true))
    }

    /// Every client holds one connection: a new client's first still gets in, in place of the
    /// connection that has earned its place least.
    @Test func aClientsFirstConnectionAlwaysGetsIn() {
        var table = Table(maxConnections: 3, maxPerClient: 100)
        table.open("a", Self.receiving(since: 4))
        let slowest = table.open("b", Self.receiving(since: 1))
        table.open("c", Self.idle(since: 3))
        #expect(table.admit("d") == .admit(shedding: slowest, idleOnly: false))
    }

    @Test func leavingConnectionsDoNotCountUntilTheyDecline() {
        var table = Table(maxConnections: 2, maxPerClient: 100)
        table.open("a", Self.receiving(since: 1))
        table.open("a", Self.receiving(since: 2))
        guard case .admit(let shed?, _) = table.admit("c") else { Issue.record("nothing shed"); return }
        #expect(table.limits.openCount == 1 && !table.limits.isFull)
        table.limits.declined(shed)
        #expect(table.limits.isFull)
        table.limits.closed(shed)
        #expect(table.limits.openCount == 1 && table.limits.count(of: "a") == 1)
    }
}
