import Dispatch
@testable import StoreRelayNet
import Testing

/// The rules of a server connection's life, event by event, without sockets.
@Suite struct ConnectionStateMachineTests {
    private let get = AnswerQueue.Owed(isHead: false, version: .http1_1)
    private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test func answersLeaveInRequestOrderWhateverOrderTheyCome() {
        var machine = ConnectionStateMachine()
        let first = machine.requestReceived(get, keepAlive: true)
        let second = machine.requestReceived(get, keepAlive: true)
        let result1 = machine.answer(second, bytes: bytes("B"))
        #expect(result1 == [])
        let result2 = machine.answer(first, bytes: bytes("A"))
        #expect(result2 == bytes("AB"))
        let result3 = machine.answer(first, bytes: bytes("again"))
        #expect(result3 == nil, "an answer counts once")
        #expect(machine.answers.allAnswered && machine.isTakingRequests)
    }

    @Test func connectionCloseMakesTheRequestTheLastThenLingers() {
        var machine = ConnectionStateMachine()
        let only = machine.requestReceived(get, keepAlive: false)
        #expect(machine.state == .finishing(last: only) && !machine.isTakingRequests && machine.isFinal(only))
        let result4 = machine.answer(only, bytes: bytes("A"))
        #expect(result4 == bytes("A"))
        #expect(machine.state == .flushingFinal)
        let deadline = DispatchTime.now()
        let result5 = machine.outputFlushed(lingerUntil: deadline)
        #expect(result5 == .linger)
        #expect(machine.state == .lingering(until: deadline) && !machine.isAnswering)
        let result6 = machine.inputEnded(requestArriving: false, outputFlushed: true)
        #expect(result6 == .close)
        #expect(machine.state == .closed)
    }

    @Test func aPeerThatAlreadyClosedIsNotLingeredFor() {
        var machine = ConnectionStateMachine()
        let only = machine.requestReceived(get, keepAlive: true)
        let result7 = machine.inputEnded(requestArriving: false, outputFlushed: true)
        #expect(result7 == .none, "its answer is still owed")
        #expect(machine.state == .finishing(last: only))
        _ = machine.answer(only, bytes: bytes("A"))
        let result8 = machine.outputFlushed(lingerUntil: .now())
        #expect(result8 == .close)
    }

    @Test func inputCutShortClosesAtOnce() {
        var machine = ConnectionStateMachine()
        _ = machine.requestReceived(get, keepAlive: true)
        let result9 = machine.inputEnded(requestArriving: true, outputFlushed: true)
        #expect(result9 == .close)
        #expect(machine.owedRequest(at: 0) == nil, "nothing is answered after a close")
    }

    @Test func drainLetsTheArrivingRequestFinishAsTheLast() {
        var machine = ConnectionStateMachine()
        let result10 = machine.drain(requestArriving: true, outputFlushed: true)
        #expect(result10 == .none)
        #expect(machine.isTakingRequests)
        let last = machine.requestReceived(get, keepAlive: true)
        #expect(machine.state == .finishing(last: last))
        let result11 = machine.drain(requestArriving: false, outputFlushed: true)
        #expect(result11 == .none, "a second drain changes nothing")
    }

    @Test func drainOfAnIdleConnectionClosesOrFlushesFirst() {
        var idle = ConnectionStateMachine()
        let result12 = idle.drain(requestArriving: false, outputFlushed: true)
        #expect(result12 == .close)
        var writing = ConnectionStateMachine()
        let result13 = writing.drain(requestArriving: false, outputFlushed: false)
        #expect(result13 == .none)
        #expect(writing.state == .flushingFinal)
        var busy = ConnectionStateMachine()
        _ = busy.requestReceived(get, keepAlive: true)
        let owed = busy.requestReceived(get, keepAlive: true)
        let result14 = busy.drain(requestArriving: false, outputFlushed: true)
        #expect(result14 == .none)
        #expect(busy.state == .finishing(last: owed))
    }

    @Test func aRefusedRequestsAnswerIsTheLast() {
        var machine = ConnectionStateMachine()
        let good = machine.requestReceived(get, keepAlive: true)
        let refused = machine.requestFailed()
        #expect(machine.isFinal(refused) && !machine.isFinal(good))
        let result15 = machine.answer(refused, bytes: bytes("400"))
        #expect(result15 == [])
        let result16 = machine.answer(good, bytes: bytes("200"))
        #expect(result16 == bytes("200400"))
        #expect(machine.state == .flushingFinal)
    }

    @Test func deferredContinueFollowsTheAnswerBeforeIt() {
        var machine = ConnectionStateMachine()
        let first = machine.requestReceived(get, keepAlive: true)
        let result17 = machine.continueNow()
        #expect(!result17, "an answer is still owed")
        let result18 = machine.answer(first, bytes: bytes("A"))
        #expect(result18 == bytes("A") + AnswerQueue.continueLine)
        var closing = ConnectionStateMachine()
        let last = closing.requestReceived(get, keepAlive: false)
        let result19 = closing.continueNow()
        #expect(!result19)
        let result20 = closing.answer(last, bytes: bytes("A"))
        #expect(result20 == bytes("A"), "no 100 Continue after the final answer")
        var idle = ConnectionStateMachine()
        let result21 = idle.continueNow()
        #expect(result21)
    }
}
