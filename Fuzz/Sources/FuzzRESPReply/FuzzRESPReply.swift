import FuzzSupport
import StoreRelayNet

/// libFuzzer target for `RESPParser`: arbitrary bytes as what a Redis server (or anything
/// pretending to be one) sends. Each input is parsed fed at once, one byte at a time and in
/// seeded chunks, with the client's limits and with tiny ones; every way must give the same
/// replies and the same verdict. Checked besides: an error is final; no reply exceeds the
/// limits, counted over the whole reply (bytes as sent, elements nested included); every
/// description is a few hundred bytes; every reply handed out re-encodes to bytes that parse
/// back to the same value.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRESPReply(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = fuzzInput(data, size)
    var random = SplitMix64(hashing: input)
    let limitChoices = [
        RESPParser.Limits(),
        RESPParser.Limits(maxReplyBytes: Int(random.next() % 128), maxReplyElements: Int(random.next() % 8),
                          maxDepth: 1 + Int(random.next() % 4), maxLineBytes: 1 + Int(random.next() % 32)),
    ]
    for limits in limitChoices {
        let whole = ReplyRun(input, limits: limits, chunkLengths: { Int.max })
        let bytewise = ReplyRun(input, limits: limits, chunkLengths: { 1 })
        let bound = random.length(upTo: 64)
        let split = ReplyRun(input, limits: limits, chunkLengths: { random.length(upTo: bound) })
        fuzzCheck(whole.replies == bytewise.replies && whole.error == bytewise.error && whole.sizes == bytewise.sizes,
                  "one byte at a time: \(bytewise.summary); at once: \(whole.summary)")
        fuzzCheck(whole.replies == split.replies && whole.error == split.error && whole.sizes == split.sizes,
                  "chunks of 1...\(bound): \(split.summary); at once: \(whole.summary)")
        for size in whole.sizes {
            fuzzCheck(size <= limits.maxReplyBytes, "a reply of \(size) bytes passed the limit of \(limits.maxReplyBytes)")
        }
        for reply in whole.replies { check(reply, limits: limits, depth: 0) }
    }
    return 0
}

struct ReplyRun {
    private(set) var replies: [RESPValue] = []
    /// The bytes each reply took in the stream, as the server sent them.
    private(set) var sizes: [Int] = []
    private(set) var error: RESPParser.ProtocolError?

    var summary: String { "\(replies.count) replies, error \(error.map(\.description) ?? "none")" }

    init(_ stream: [UInt8], limits: RESPParser.Limits, chunkLengths: () -> Int) {
        var parser = RESPParser(limits: limits)
        var offset = 0
        var consumed = 0
        do {
            while offset < stream.count {
                let end = offset + min(chunkLengths(), stream.count - offset)
                parser.feed(stream[offset..<end])
                offset = end
                while let reply = try parser.next() {
                    replies.append(reply)
                    // A reply handed out is consumed up to its last byte, and no further.
                    sizes.append(offset - parser.bufferedByteCount - consumed)
                    consumed = offset - parser.bufferedByteCount
                }
            }
        } catch {
            self.error = error
            parser.feed(Array("+OK\r\n".utf8))
            do {
                _ = try parser.next()
                fuzzCheck(false, "after \(error) the parser read on")
            } catch let again {
                fuzzCheck(again == error, "\(again) thrown after \(error)")
            }
        }
    }
}

/// Limits hold for the reply as a whole (its bytes are checked by the caller, from the
/// stream), every description stays short, and encoding a reply the way a server would
/// gives it back.
private func check(_ reply: RESPValue, limits: RESPParser.Limits, depth: Int) {
    if depth == 0 {
        fuzzCheck(elementCount(reply) <= limits.maxReplyElements, "a reply of \(elementCount(reply)) elements passed the limit")
        fuzzCheck(reply.description.utf8.count <= RESPValue.describedBytes + 4, "a description of \(reply.description.utf8.count) bytes")
    }
    if case .array(let elements?) = reply {
        fuzzCheck(depth < limits.maxDepth || elements.isEmpty, "nesting passed the limit")
        for element in elements { check(element, limits: limits, depth: depth + 1) }
    }
    if depth == 0 {
        var parser = RESPParser()
        parser.feed(encode(reply))
        let again = try? parser.next()
        fuzzCheck(again == reply, "\(reply) re-encoded parses as \(String(describing: again))")
    }
}

/// Elements of arrays in `value`, nested ones included.
private func elementCount(_ value: RESPValue) -> Int {
    guard case .array(let elements?) = value else { return 0 }
    return elements.count + elements.map(elementCount).reduce(0, +)
}

private func encode(_ value: RESPValue) -> [UInt8] {
    func line(_ type: Character, _ text: String) -> [UInt8] { Array("\(type)\(text)\r\n".utf8) }
    switch value {
    case .simpleString(let text): return line("+", text)
    case .error(let text): return line("-", text)
    case .integer(let number): return line(":", String(number))
    case .bulkString(nil): return line("$", "-1")
    case .bulkString(let bytes?): return line("$", String(bytes.count)) + bytes + [13, 10]
    case .array(nil): return line("*", "-1")
    case .array(let elements?): return line("*", String(elements.count)) + elements.flatMap(encode)
    }
}
