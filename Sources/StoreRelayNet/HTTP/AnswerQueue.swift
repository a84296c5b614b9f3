/// The answers one connection owes, released in request order whatever order handlers finish
/// in (HTTP/1.1 pipelining, RFC 9112 §9.3.2). A value type with no I/O: the connection asks it
/// for a request's place in line and hands it answers; it says which bytes may go out now.
struct AnswerQueue {
    /// What writing an answer needs to know about its request.
    struct Owed {
        var isHead: Bool
        var version: HTTPVersion
    }

    /// The place in line the next request (or error answer) gets.
    private(set) var nextRequest = 0
    /// The place in line whose answer goes out next.
    private(set) var nextAnswer = 0
    private var owed: [Int: Owed] = [:]
    /// Serialized answers waiting for an earlier one.
    private var ready: [Int: [UInt8]] = [:]
    /// A request whose `100 Continue` waits for the answers before it to go out first.
    private var continuePending: Int?

    /// Requests taken and not yet answered on the wire.
    var outstanding: Int { nextRequest - nextAnswer }
    var allAnswered: Bool { nextRequest == nextAnswer }
    /// The place in line of the last request taken (-1 before the first).
    var lastTaken: Int { nextRequest - 1 }

    /// Gives a request its place in line.
    mutating func take(_ request: Owed) -> Int {
        let sequence = nextRequest
        nextRequest += 1
        owed[sequence] = request
        if continuePending == sequence { continuePending = nil }
        return sequence
    }

    /// Whether a `100 Continue` for the request now arriving may go out at once; if not, it
    /// goes out after the answers before it (see `answer`).
    mutating func continueNow() -> Bool {
        guard allAnswered else {
            continuePending = nextRequest
            return false
        }
        return true
    }

    /// What is known of the request at `sequence`, if its answer is still owed.
    func request(at sequence: Int) -> Owed? { owed[sequence] }

    /// Stores the answer for `sequence` (nil when it is not owed: answered already, or the
    /// connection gave up) and returns the bytes of every answer whose turn has come, in
    /// order. A deferred `100 Continue` follows the answer before it, unless `isFinal` says
    /// that answer ends the connection.
    mutating func answer(_ sequence: Int, bytes: [UInt8], isFinal: (Int) -> Bool) -> [UInt8]? {
        guard owed.removeValue(forKey: sequence) != nil else { return nil }
        ready[sequence] = bytes
        var out: [UInt8] = []
        while let next = ready.removeValue(forKey: nextAnswer) {
            out.append(contentsOf: next)
            let final = isFinal(nextAnswer)
            nextAnswer += 1
            if continuePending == nextAnswer && !final {
                out.append(contentsOf: Self.continueLine)
                continuePending = nil
            }
            if final { break }
        }
        return out
    }

    mutating func removeAll() {
        owed.removeAll()
        ready.removeAll()
        continuePending = nil
    }

    static let continueLine = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)
}
