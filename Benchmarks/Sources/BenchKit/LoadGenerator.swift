/// A non-blocking HTTP load generator over many keep-alive connections, on one event loop.
///
/// Each pre-built request is sent at most once. `closedLoop` keeps every connection busy
/// (saturation). `fixedRate` offers requests on a schedule (request k is due at
/// start + k/rate) whatever the answers do, and measures latency from the due time, so time
/// spent waiting for a free connection counts (no coordinated omission).
public final class LoadGenerator {
    public enum Pace {
        case closedLoop
        case fixedRate(perSecond: Double)
    }

    /// What an answer was; the caller's `classify` decides from the status and body.
    public enum Outcome { case ok, duplicate, failed }

    private let loop: EventLoop
    private let port: UInt16
    private let requests: [[UInt8]]
    private let connectionCount: Int
    private let pace: Pace
    private let duration: UInt64
    private let classify: (Int, ArraySlice<UInt8>) -> Outcome

    private var connections: [LoadConnection] = []
    private var idle: [LoadConnection] = []
    private var ticker: Ticker?
    private var nextIndex = 0
    private var due = 0
    private var inFlight = 0
    private var startTime: UInt64 = 0
    private var deadline: UInt64 = 0
    private var result = LoadResult()

    public init(
        loop: EventLoop, port: UInt16, requests: [[UInt8]], connections: Int, pace: Pace,
        duration seconds: Double, classify: @escaping (Int, ArraySlice<UInt8>) -> Outcome
    ) {
        self.loop = loop
        self.port = port
        self.requests = requests
        self.connectionCount = connections
        self.pace = pace
        self.duration = UInt64(seconds * 1e9)
        self.classify = classify
        result.sendTimes = [UInt64](repeating: 0, count: requests.count)
        result.answerTimes = [UInt64](repeating: 0, count: requests.count)
    }

    /// Connects every connection, then starts offering load.
    public func start() throws(BenchError) {
        for _ in 0..<connectionCount {
            let connection = LoadConnection(fd: try Socket.connect(port: port), generator: self, loop: loop)
            connections.append(connection)
            idle.append(connection)
        }
        startTime = Monotonic.nanoseconds()
        deadline = startTime + duration
        result.start = startTime
        switch pace {
        case .closedLoop:
            due = requests.count
            issue()
        case .fixedRate(let rate):
            // 4 ticks per millisecond: a request is at most 250 µs late when a connection is free.
            ticker = try Ticker(loop: loop, interval: 250_000) { [unowned self] _ in
                let now = Monotonic.nanoseconds()
                let elapsed = Double(min(now, self.deadline) - self.startTime) / 1e9
                self.due = min(self.requests.count, Int(elapsed * rate) + 1)
                self.issue()
            }
        }
    }

    /// True once the time is up (or the requests ran out) and every request sent is answered.
    public var isDone: Bool {
        let stopped = Monotonic.nanoseconds() >= deadline || nextIndex >= requests.count
        return stopped && inFlight == 0
    }

    /// Stops the pacing, closes the connections and returns what was measured.
    public func finish() -> LoadResult {
        ticker?.stop()
        ticker = nil
        for connection in connections { loop.remove(connection.fd) }
        connections.removeAll()
        idle.removeAll()
        result.unanswered = inFlight
        result.sent = nextIndex
        result.exhausted = nextIndex >= requests.count && result.end < deadline
        return result
    }

    private func issue() {
        let now = Monotonic.nanoseconds()
        guard now < deadline else { return }
        while nextIndex < due, let connection = idle.popLast() {
            let index = nextIndex
            nextIndex += 1
            inFlight += 1
            switch pace {
            case .closedLoop:
                result.sendTimes[index] = now
            case .fixedRate(let rate):
                result.sendTimes[index] = startTime + UInt64(Double(index) / rate * 1e9)
            }
            connection.send(index: index, request: requests[index])
        }
    }

    func completed(_ index: Int, message: HTTPMessageFramer.Message, at now: UInt64, on connection: LoadConnection) {
        inFlight -= 1
        result.answerTimes[index] = now
        result.end = max(result.end, now)
        result.statuses[message.status, default: 0] += 1
        switch classify(message.status, message.body) {
        case .ok: result.ok += 1
        case .duplicate: result.duplicates += 1
        case .failed:
            result.failed += 1
            if result.firstFailure == nil {
                result.firstFailure = "HTTP \(message.status) " + String(decoding: message.body.prefix(200), as: UTF8.self)
            }
        }
        idle.append(connection)
        issue()
    }

    func connectionFailed(_ connection: LoadConnection, losing index: Int, reason: String) {
        connections.removeAll { $0 === connection }
        idle.removeAll { $0 === connection }
        if index >= 0 {
            inFlight -= 1
            result.failed += 1
            result.connectionErrors += 1
            if result.firstFailure == nil { result.firstFailure = reason }
        }
        // Replace it so the offered load keeps its shape.
        if let fd = try? Socket.connect(port: port) {
            let replacement = LoadConnection(fd: fd, generator: self, loop: loop)
            connections.append(replacement)
            idle.append(replacement)
            issue()
        }
    }
}
