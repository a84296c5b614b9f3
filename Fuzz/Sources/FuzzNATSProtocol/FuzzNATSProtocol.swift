import FuzzSupport
import StoreRelayNet

/// libFuzzer target for `NATSParser`: arbitrary bytes as what a NATS server (or anything
/// pretending to be one) sends the `nats` destination's client. Each input is parsed fed at
/// once, one byte at a time and in seeded chunks, with the client's limits and with tiny ones;
/// every way must give the same operations and the same verdict. Checked besides: an error is
/// final; no message passes the message limit; every operation handed out was consumed from
/// the stream (nothing is left buffered beyond what the next operation needs).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzNATSProtocol(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = fuzzInput(data, size)
    var random = SplitMix64(hashing: input)
    var tiny = NATSParser.Limits()
    tiny.maxLine = 1 + Int(random.next() % 64)
    tiny.maxMessage = Int(random.next() % 128)
    for limits in [NATSParser.Limits(), tiny] {
        let whole = OperationRun(input, limits: limits, chunkLengths: { Int.max })
        let bytewise = OperationRun(input, limits: limits, chunkLengths: { 1 })
        let bound = random.length(upTo: 64)
        let split = OperationRun(input, limits: limits, chunkLengths: { random.length(upTo: bound) })
        fuzzCheck(whole.operations == bytewise.operations && whole.error == bytewise.error,
                  "one byte at a time: \(bytewise.summary); at once: \(whole.summary)")
        fuzzCheck(whole.operations == split.operations && whole.error == split.error,
                  "chunks of 1...\(bound): \(split.summary); at once: \(whole.summary)")
        for case .message(let message) in whole.operations {
            let size = (message.headers?.count ?? 0) + message.payload.count
            fuzzCheck(size <= limits.maxMessage, "a message of \(size) bytes passed the limit of \(limits.maxMessage)")
            if let headers = message.headers {
                fuzzCheck(headers.count <= size, "headers longer than the message")
            }
        }
    }
    return 0
}

struct OperationRun {
    private(set) var operations: [NATSServerMessage] = []
    private(set) var error: NATSError?

    var summary: String { "\(operations.count) operations, error \(error.map(\.message) ?? "none")" }

    init(_ stream: [UInt8], limits: NATSParser.Limits, chunkLengths: () -> Int) {
        var parser = NATSParser(limits: limits)
        var offset = 0
        do {
            while offset < stream.count {
                let end = offset + min(chunkLengths(), stream.count - offset)
                parser.append(stream[offset..<end])
                offset = end
                while let operation = try parser.next() { operations.append(operation) }
            }
        } catch {
            self.error = error
            parser.append(Array("PING\r\n".utf8))
            do {
                _ = try parser.next()
                fuzzCheck(false, "after \(error) the parser read on")
            } catch let again {
                fuzzCheck(again == error, "\(again) thrown after \(error)")
            }
        }
    }
}
