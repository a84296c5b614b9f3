import Dispatch
@testable import StoreRelayNet
import Testing

/// The rules of one Redis connection (greeting, replies in command order, deadlines, the end),
/// event by event, without a socket. Waiters are numbers.
@Suite struct RESPPipelineStateMachineTests {
    private typealias Machine = RESPPipelineStateMachine<Int>
    private let start = DispatchTime(uptimeNanoseconds: 1_000_000_000)

    /// What an action says, in a form tests compare.
    private enum Seen: Equatable {
        case send(String, deadline: DispatchTime?)
        case deadline(DispatchTime)
        case reject([Int], RedisError.Code)
        case deliver(Int, RESPValue)
        case ready(DispatchTime)
        case close(RedisError.Code, String, unanswered: [Int])
    }

    private func seen(_ action: Machine.Action?) -> Seen? {
        switch action {
        case nil: nil
        case .send(let bytes, let deadline)?: .send(String(decoding: bytes, as: UTF8.self), deadline: deadline)
        case .setDeadline(let time)?: .deadline(time)
        case .reject(let waiters, let error)?: .reject(waiters, error.code)
        case .deliver(let waiter, let reply)?: .deliver(waiter, reply)
        case .ready(let deadline)?: .ready(deadline)
        case .close(let error, let unanswered)?: .close(error.code, error.message, unanswered: unanswered)
        }
    }

    private func configuration(_ url: String = "redis://127.0.0.1:6379", configure: (inout RedisConfiguration) -> Void = { _ in })
        -> RedisConfiguration {
        var configuration = RedisConfiguration(url: try! RedisURL.parse(url))
        configuration.commandTimeout = .seconds(5)
        configuration.connectTimeout = .seconds(3)
        configure(&configuration)
        return configuration
    }

    /// Every action the bytes call for, in order.
    private func feed(_ machine: inout Machine, _ text: String) -> [Seen] {
        machine.received(Array(text.utf8))
        var actions: [Seen] = []
        while let action = seen(machine.nextReply()) { actions.append(action) }
        return actions
    }

    /// A machine past its greeting (a plain `HELLO 2`).
    private func ready() -> Machine {
        var machine = Machine(configuration: configuration())
        _ = machine.open(now: start)
        _ = machine.established()
        _ = feed(&machine, "*2\r\n$6\r\nserver\r\n$5\r\nredis\r\n")
        return machine
    }

    @Test func theGreetingIsOnePipelinedWriteThenReady() {
        var machine = Machine(configuration: configuration("redis://relay:s3cret@127.0.0.1:6379/5") {
            $0.clientName = "relay-1"
            $0.connectionChecks = [RESPCommand("CONFIG", "GET", "appendonly")]
            $0.acceptConnection = { replies in
                if case .array(let items?)? = replies.first, items.last?.string == "yes" { return nil }
                return "appendonly is off"
            }
        })
        let armed = seen(machine.open(now: start))
        #expect(armed == .deadline(start.advanced(by: .seconds(3))))
        let greeting = seen(machine.established())
        let expected = [RESPCommand("HELLO", "2", "AUTH", "relay", "s3cret", "SETNAME", "relay-1"), RESPCommand("SELECT", "5"),
                        RESPCommand("CONFIG", "GET", "appendonly")].map { String(decoding: $0.encoded, as: UTF8.self) }.joined()
        #expect(greeting == .send(expected, deadline: nil))
        let early = seen(machine.send([(RESPCommand("PING"), 1)], now: start))
        #expect(early == .reject([1], .unavailable), "no command before the greeting is through")
        let replies = feed(&machine, "*0\r\n+OK\r\n*2\r\n$10\r\nappendonly\r\n$3\r\nyes\r\n")
        #expect(replies == [.ready(.distantFuture)] && machine.state == .ready)
    }

    @Test func aRefusedGreetingClosesWithTheServersWords() {
        var wrongPassword = Machine(configuration: configuration("redis://:bad@127.0.0.1:6379"))
        _ = wrongPassword.established()
        let refused = feed(&wrongPassword, "-WRONGPASS invalid username-password pair\r\n")
        #expect(refused.count == 1)
        guard case .close(.refused, let message, _)? = refused.first else { Issue.record("\(refused)"); return }
        #expect(message.contains("HELLO/AUTH: WRONGPASS") && !message.contains("bad"))

        var unwanted = Machine(configuration: configuration {
            $0.connectionChecks = [RESPCommand("CONFIG", "GET", "appendonly")]
            $0.acceptConnection = { _ in "the server runs with appendonly no" }
        })
        _ = unwanted.established()
        let check = feed(&unwanted, "*0\r\n-ERR unknown command\r\n")
        #expect(check == [.close(.refused, "the server runs with appendonly no", unanswered: [])], "a check's error reply is judged")
    }

    /// Replies go to their commands in order, whatever the chunking of the bytes.
    @Test func repliesFollowTheCommandsInEveryChunking() {
        let wire = "+OK\r\n$5\r\nhello\r\n:42\r\n-ERR nope\r\n*2\r\n$1\r\na\r\n$-1\r\n"
        let expected: [Seen] = [
            .deliver(1, .simpleString("OK")), .deliver(2, .bulkString(Array("hello".utf8))), .deliver(3, .integer(42)),
            .deliver(4, .error("ERR nope")), .deliver(5, .array([.bulkString(Array("a".utf8)), .bulkString(nil)])),
        ]
        let bytes = Array(wire.utf8)
        for split in 0...bytes.count {
            var machine = ready()
            let sent = seen(machine.send((1...5).map { (RESPCommand("GET", "k\($0)"), $0) }, now: start))
            guard case .send(_, let deadline)? = sent else { Issue.record("\(String(describing: sent))"); return }
            #expect(deadline == start.advanced(by: .seconds(5)))
            let actions = feed(&machine, String(decoding: bytes[..<split], as: UTF8.self))
                + feed(&machine, String(decoding: bytes[split...], as: UTF8.self))
            #expect(actions == expected, "split at \(split)")
        }
        var byteByByte = ready()
        _ = byteByByte.send((1...5).map { (RESPCommand("GET", "k\($0)"), $0) }, now: start)
        var actions: [Seen] = []
        for byte in bytes {
            byteByByte.received([byte])
            while let action = seen(byteByByte.nextReply()) { actions.append(action) }
        }
        #expect(actions == expected)
    }

    @Test func aReplyNobodyAskedForOrBadBytesEndTheConnection() {
        var unasked = ready()
        let extra = feed(&unasked, "+OK\r\n")
        guard case .close(.protocolError, let message, [])? = extra.first else { Issue.record("\(extra)"); return }
        #expect(message.contains("nothing asked for"))

        var garbage = ready()
        _ = garbage.send([(RESPCommand("PING"), 7)], now: start)
        let bad = feed(&garbage, "?what\r\n")
        guard case .close(.protocolError, _, [7])? = bad.first else { Issue.record("\(bad)"); return }

        var huge = Machine(configuration: configuration { $0.replyLimits = .init(maxReplyBytes: 1024) })
        _ = huge.established()
        _ = feed(&huge, "+OK\r\n")
        _ = huge.send([(RESPCommand("GET", "big"), 8)], now: start)
        let tooLarge = feed(&huge, "$4096\r\n")
        guard case .close(.replyTooLarge, _, [8])? = tooLarge.first else { Issue.record("\(tooLarge)"); return }
        #expect(huge.state == .closed)
    }

    /// The timer follows the oldest unanswered command; before ready it is the connect timeout.
    @Test func deadlinesFollowTheOldestCommand() {
        var machine = ready()
        let first = seen(machine.send([(RESPCommand("PING"), 1)], now: start))
        #expect(first == .send("*1\r\n$4\r\nPING\r\n", deadline: start.advanced(by: .seconds(5))))
        let second = seen(machine.send([(RESPCommand("PING"), 2)], now: start.advanced(by: .seconds(2))))
        #expect(second == .send("*1\r\n$4\r\nPING\r\n", deadline: nil), "the oldest command's deadline stands")
        _ = feed(&machine, "+PONG\r\n")
        let moved = seen(machine.deadlinePassed(now: start.advanced(by: .seconds(5))))
        #expect(moved == .deadline(start.advanced(by: .seconds(7))))
        let expired = seen(machine.deadlinePassed(now: start.advanced(by: .seconds(7))))
        guard case .close(.timeout, _, [2])? = expired else { Issue.record("\(String(describing: expired))"); return }
        let again = seen(machine.deadlinePassed(now: start.advanced(by: .seconds(9))))
        #expect(again == nil, "closed once")

        var idle = ready()
        let nothingOwed = seen(idle.deadlinePassed(now: start))
        #expect(nothingOwed == .deadline(.distantFuture))

        var slow = Machine(configuration: configuration())
        _ = slow.open(now: start)
        _ = slow.established()
        let timedOut = seen(slow.deadlinePassed(now: start.advanced(by: .seconds(3))))
        guard case .close(.unavailable, let message, [])? = timedOut else { Issue.record("\(String(describing: timedOut))"); return }
        #expect(message.hasPrefix("no connection to redis://127.0.0.1:6379/0 within"))
    }

    @Test func theEndFailsEveryUnansweredCommandOnce() {
        var machine = ready()
        _ = machine.send([(RESPCommand("GET", "a"), 1), (RESPCommand("GET", "b"), 2)], now: start)
        _ = feed(&machine, "$1\r\nA\r\n")
        let ended = seen(machine.inputEnded())
        #expect(ended == .close(.unavailable, "redis://127.0.0.1:6379/0 closed the connection", unanswered: [2]))
        let closedAgain = seen(machine.close(RedisError(.shutdown, "again")))
        #expect(closedAgain == nil)
        let after = seen(machine.send([(RESPCommand("PING"), 3)], now: start))
        #expect(after == .reject([3], .unavailable))
    }

    @Test func driverFailuresAreWordedForTheOperator() {
        let origin = "redis://127.0.0.1:6379/0"
        let cases: [(OutboundError, String)] = [
            (OutboundError(.connect, "cannot connect to \(origin): 127.0.0.1:6379: Connection refused"),
             "cannot connect to \(origin): 127.0.0.1:6379: Connection refused"),
            (OutboundError(.handshake, "x", endOfStream: true), "\(origin) closed the connection"),
            (OutboundError(.handshake, "x", tlsReason: "certificate verify failed"), "connection to \(origin) failed: certificate verify failed"),
            (OutboundError(.io, "x", errno: 32, whileSending: true), "connection to \(origin) broke while sending"),
        ]
        for (driver, message) in cases {
            var machine = ready()
            let closed = seen(machine.failed(driver))
            #expect(closed == .close(.unavailable, message, unanswered: []), "\(driver)")
        }
    }
}
