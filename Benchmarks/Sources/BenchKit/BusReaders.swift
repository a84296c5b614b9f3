#if canImport(Glibc)
import Glibc
#endif

/// One event seen arriving at a bus, read back by the harness: its id and when the harness
/// read it (`CLOCK_MONOTONIC`, like the load generator's send times).
public struct BusReceipt {
    public let id: String
    public let at: UInt64

    public init(id: String, at: UInt64) {
        self.id = id
        self.at = at
    }
}

/// A loopback client connection on the harness's event loop: what it reads is appended to
/// `input` and handed to `consume`, which returns how many bytes it used. The readers below
/// speak just enough of their protocol to watch a bus; they are not clients to reuse.
public class BusConnection: EventHandler {
    let fd: Int32
    unowned let loop: EventLoop
    var input: [UInt8] = []
    private var chunk = [UInt8](repeating: 0, count: 262_144)
    public private(set) var closed = false
    /// Set when the peer closed or sent something the reader does not understand.
    public private(set) var failure: String?

    init(loop: EventLoop, port: UInt16) throws(BenchError) {
        fd = try Socket.connect(port: port)
        self.loop = loop
        loop.add(fd, EventLoop.readable, self)
    }

    /// Watches `fd`, already open and non-blocking (a pipe's read end, say); it is closed by `stop`.
    init(loop: EventLoop, fd: Int32) {
        self.fd = fd
        self.loop = loop
        loop.add(fd, EventLoop.readable, self)
    }

    /// Writes `bytes` whole. Commands are small and the kernel's send buffer is empty between
    /// them, so waiting out a rare EAGAIN here costs nothing measurable.
    func send(_ bytes: [UInt8]) {
        var sent = 0
        while sent < bytes.count, !closed {
            let count = bytes[sent...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if count > 0 {
                sent += count
            } else if count < 0, errno == EAGAIN || errno == EINTR {
                usleep(100)
            } else {
                fail("write: \(String(cString: strerror(errno)))")
            }
        }
    }

    public func handle(events: UInt32) {
        while !closed {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count > 0 {
                input.append(contentsOf: chunk[0..<count])
            } else if count == 0 {
                fail("the other end closed the connection")
            } else {
                if errno != EAGAIN && errno != EINTR { fail("read: \(String(cString: strerror(errno)))") }
                break
            }
        }
        guard !input.isEmpty else { return }
        let used = consume(at: Monotonic.nanoseconds())
        if used > 0 { input.removeFirst(used) }
    }

    /// Parses what `input` holds; returns the bytes used (complete messages only).
    func consume(at now: UInt64) -> Int { input.count }

    func fail(_ reason: String) {
        if failure == nil { failure = reason }
        stop()
    }

    public func stop() {
        guard !closed else { return }
        closed = true
        loop.remove(fd)
    }

    /// The index of the next CRLF at or after `from`, nil when it has not arrived yet.
    func lineEnd(from: Int) -> Int? {
        var index = from
        while index + 1 < input.count {
            if input[index] == 13 && input[index + 1] == 10 { return index }
            index += 1
        }
        return nil
    }
}

/// Reads a Redis stream as the gateway appends to it: `XREAD COUNT 256 BLOCK 0 STREAMS key
/// last-id` again and again on one connection, recording each entry's `id` field (the event
/// id) when its reply arrives. An entry is readable once `XADD` stored it, which is when the
/// gateway counts the event delivered, so the receipt follows the confirmation by one read.
public final class RedisStreamReader: BusConnection {
    private let key: String
    private var lastID = "0-0"
    public private(set) var receipts: [BusReceipt] = []

    public init(loop: EventLoop, port: UInt16, key: String) throws(BenchError) {
        self.key = key
        try super.init(loop: loop, port: port)
        requestMore()
    }

    private func requestMore() {
        send(Self.command(["XREAD", "COUNT", "256", "BLOCK", "0", "STREAMS", key, lastID]))
    }

    /// A command as a RESP array of bulk strings.
    static func command(_ words: [String]) -> [UInt8] {
        var text = "*\(words.count)\r\n"
        for word in words { text += "$\(word.utf8.count)\r\n\(word)\r\n" }
        return Array(text.utf8)
    }

    /// A RESP value whose strings are left in the input buffer as ranges: a reply that arrives
    /// in many reads is parsed again from its start each time, so parsing must not copy the
    /// event bodies it skips.
    indirect enum Value {
        case string(Range<Int>)
        case error(Range<Int>)
        case integer(Int)
        case array([Value])
        case null
    }

    /// Parses one value at `index`, advancing it; nil when the value is not complete yet.
    func parse(_ index: inout Int) -> Value? {
        guard index < input.count, let end = lineEnd(from: index + 1) else { return nil }
        let kind = input[index]
        let header = index + 1..<end
        let number = Int(String(decoding: input[header], as: UTF8.self)) ?? -1
        switch kind {
        case UInt8(ascii: "+"):
            index = end + 2
            return .string(header)
        case UInt8(ascii: "-"):
            index = end + 2
            return .error(header)
        case UInt8(ascii: ":"):
            index = end + 2
            return .integer(number)
        case UInt8(ascii: "$"):
            if number < 0 { index = end + 2; return .null }
            let start = end + 2
            guard input.count >= start + number + 2 else { return nil }
            index = start + number + 2
            return .string(start..<start + number)
        case UInt8(ascii: "*"):
            var cursor = end + 2
            if number < 0 { index = cursor; return .null }
            var elements: [Value] = []
            elements.reserveCapacity(number)
            for _ in 0..<number {
                guard let element = parse(&cursor) else { return nil }
                elements.append(element)
            }
            index = cursor
            return .array(elements)
        default:
            fail("not a RESP reply: byte \(kind)")
            return nil
        }
    }

    override func consume(at now: UInt64) -> Int {
        var index = 0
        guard let reply = parse(&index) else { return 0 }
        switch reply {
        case .error(let range):
            fail("XREAD: " + String(decoding: input[range], as: UTF8.self))
            return index
        case .array(let streams):
            // [[key, [[entry id, [field, value, ...]], ...]]]
            for case .array(let stream) in streams where stream.count == 2 {
                guard case .array(let entries) = stream[1] else { continue }
                for case .array(let entry) in entries where entry.count == 2 {
                    if case .string(let entryID) = entry[0] { lastID = String(decoding: input[entryID], as: UTF8.self) }
                    guard case .array(let fields) = entry[1] else { continue }
                    var field = 0
                    while field + 1 < fields.count {
                        if case .string(let name) = fields[field], input[name].elementsEqual("id".utf8),
                           case .string(let value) = fields[field + 1] {
                            receipts.append(BusReceipt(id: String(decoding: input[value], as: UTF8.self), at: now))
                            break
                        }
                        field += 2
                    }
                }
            }
        default:
            break
        }
        requestMore()
        return index
    }
}

/// A NATS connection that subscribes and publishes (core protocol with headers): enough to
/// create a JetStream stream and consumer through the `$JS.API` subjects and to receive what
/// a push consumer delivers. Every `MSG`/`HMSG` goes to `onMessage` with its subject, its
/// `StoreRelay-Event-Id` header (if any) and its payload.
public final class NATSConnection: BusConnection {
    public struct Message {
        public let subject: String
        public let eventID: String?
        public let payload: [UInt8]
        public let at: UInt64
    }

    public var onMessage: (Message) -> Void = { _ in }
    /// `-ERR` lines from the server (a refused subscription, say).
    public private(set) var errors: [String] = []

    public override init(loop: EventLoop, port: UInt16) throws(BenchError) {
        try super.init(loop: loop, port: port)
        // The server sends INFO first; CONNECT may follow it at once. Headers are needed to
        // read `StoreRelay-Event-Id`; no_responders turns a request to a missing API into a
        // 503 status instead of silence.
        send(Array("CONNECT {\"verbose\":false,\"pedantic\":false,\"headers\":true,\"no_responders\":true,\"protocol\":1,\"name\":\"storerelay-bench\"}\r\n".utf8))
    }

    public func subscribe(_ subject: String, sid: Int) {
        send(Array("SUB \(subject) \(sid)\r\n".utf8))
    }

    public func publish(_ subject: String, reply: String, payload: String) {
        send(Array("PUB \(subject) \(reply) \(payload.utf8.count)\r\n\(payload)\r\n".utf8))
    }

    override func consume(at now: UInt64) -> Int {
        var index = 0
        while let end = lineEnd(from: index) {
            let line = String(decoding: input[index..<end], as: UTF8.self)
            let words = line.split(separator: " ")
            let operation = words.first.map { $0.uppercased() } ?? ""
            if operation == "MSG" || operation == "HMSG" {
                // MSG subject sid [reply] size; HMSG subject sid [reply] header-size total-size
                guard let total = words.last.flatMap({ Int($0) }) else { fail("bad line: \(line)"); return index }
                let headerSize = operation == "HMSG" ? Int(words[words.count - 2]) ?? 0 : 0
                let start = end + 2
                guard input.count >= start + total + 2 else { return index }
                let eventID = headerSize > 0 ? Self.header("storerelay-event-id", in: input[start..<start + headerSize]) : nil
                onMessage(Message(subject: String(words[1]), eventID: eventID,
                                  payload: Array(input[start + headerSize..<start + total]), at: now))
                index = start + total + 2
                continue
            }
            switch operation {
            case "PING": send(Array("PONG\r\n".utf8))
            case "-ERR": errors.append(line)
            default: break // INFO, PONG, +OK
            }
            index = end + 2
        }
        return index
    }

    /// A header's value from a `NATS/1.0` header block, the name compared without case.
    static func header(_ name: String, in block: ArraySlice<UInt8>) -> String? {
        let text = String(decoding: block, as: UTF8.self)
        for line in text.split(separator: "\r\n").dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            if line[..<colon].lowercased() == name {
                return line[line.index(after: colon)...].trimmingCharacters(in: " ")
            }
        }
        return nil
    }
}

/// Receipts from a bus reader running as a child process (a Python consumer on a real client
/// library: pika for AMQP, boto3 for SQS), one line each on a pipe to the harness:
/// `<event id> <CLOCK_MONOTONIC ns>`, the time the reader took the message from the broker
/// (Python's `time.monotonic_ns()` reads the same system-wide clock as `Monotonic`, so POST ->
/// receipt is still a difference of two readings of one clock). The reader's first line is
/// `ready` (its queue exists and it is consuming). A program that watches a broker's count
/// instead of consuming prints `count <n> <ns>` lines (`counts`). Any other line is kept as
/// `notes`.
///
/// Writing these consumers in Swift would mean an AMQP 0-9-1 client and a SigV4-signed SQS
/// client in the harness: the real clients are shorter and are what a team would run.
public final class LineReceiptReader: BusConnection {
    public private(set) var receipts: [BusReceipt] = []
    public private(set) var ready = false
    /// The broker's own count of messages held, and when the watcher read it.
    public private(set) var counts: [(count: Int, at: UInt64)] = []
    /// Lines that are neither `ready` nor a receipt, for the report.
    public private(set) var notes: [String] = []

    /// Creates the pipe the child writes to; pass `writeEnd` to `ChildProcess` as its stdout,
    /// then call `childStarted()` so the harness holds only the read end.
    public let writeEnd: Int32

    public init(loop: EventLoop) throws(BenchError) {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { throw .system("pipe") }
        // Close-on-exec on both ends, so no other child (a gateway, a broker) keeps the pipe
        // open; the harness is single-threaded, so no spawn can slip in between.
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        _ = fcntl(ends[0], F_SETFL, fcntl(ends[0], F_GETFL) | O_NONBLOCK)
        writeEnd = ends[1]
        super.init(loop: loop, fd: ends[0])
    }

    /// Closes the harness's copy of the write end: the pipe then ends when the child exits.
    public func childStarted() {
        close(writeEnd)
    }

    override func consume(at now: UInt64) -> Int {
        var index = 0
        while let newline = input[index...].firstIndex(of: 10) {
            let line = input[index..<newline]
            index = newline + 1
            if let space = line.lastIndex(of: 32),
               let at = UInt64(String(decoding: line[(space + 1)...], as: UTF8.self)) {
                let first = String(decoding: line[..<space], as: UTF8.self)
                if first.hasPrefix("count "), let count = Int(first.dropFirst("count ".count)) {
                    counts.append((count, at))
                } else {
                    receipts.append(BusReceipt(id: first, at: at))
                }
            } else if line.elementsEqual("ready".utf8) {
                ready = true
            } else {
                notes.append(String(decoding: line, as: UTF8.self))
            }
        }
        return index
    }
}

extension Substring {
    fileprivate func trimmingCharacters(in character: Character) -> String {
        String(drop { $0 == character }.reversed().drop { $0 == character }.reversed())
    }
}
