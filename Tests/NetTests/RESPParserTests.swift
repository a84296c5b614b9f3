import StoreRelayNet
import Testing

/// The RESP2 reply parser, fed every chunking of each input (a reply may arrive in any pieces).
@Suite struct RESPParserTests {
    /// All replies in `text`, fed at once, byte by byte, and split at every offset; all must agree.
    private func parseEveryWay(_ text: String, limits: RESPParser.Limits = .init()) throws -> [RESPValue] {
        let bytes = Array(text.utf8)
        var splits: [[ArraySlice<UInt8>]] = [[bytes[...]], bytes.indices.map { bytes[$0...$0] }]
        for offset in 1..<max(bytes.count, 2) where offset < bytes.count { splits.append([bytes[..<offset], bytes[offset...]]) }
        var results: [[RESPValue]] = []
        for pieces in splits {
            var parser = RESPParser(limits: limits)
            var values: [RESPValue] = []
            for piece in pieces {
                parser.feed(piece)
                while let value = try parser.next() { values.append(value) }
            }
            #expect(!parser.hasPartialReply, "nothing left over")
            results.append(values)
        }
        for result in results { #expect(result == results[0]) }
        return results[0]
    }

    private func refused(_ text: String, limits: RESPParser.Limits = .init()) -> RESPParser.ProtocolError? {
        var parser = RESPParser(limits: limits)
        parser.feed(Array(text.utf8))
        do {
            while try parser.next() != nil {}
            return nil
        } catch {
            // Final: the same error again, whatever follows.
            parser.feed(Array("+OK\r\n".utf8))
            #expect(throws: RESPParser.ProtocolError.self) { _ = try parser.next() }
            return error
        }
    }

    @Test func everyReplyType() throws {
        let values = try parseEveryWay("+OK\r\n-ERR unknown command 'x'\r\n:42\r\n:-7\r\n$5\r\nhello\r\n$0\r\n\r\n$-1\r\n*-1\r\n*0\r\n")
        #expect(values == [
            .simpleString("OK"), .error("ERR unknown command 'x'"), .integer(42), .integer(-7),
            .bulkString(Array("hello".utf8)), .bulkString([]), .bulkString(nil), .array(nil), .array([]),
        ])
        #expect(values[1].errorKind == "ERR" && values[4].string == "hello" && values[6].isNull && values[2].integer == 42)
    }

    @Test func bulkStringsCarryAnyBytes() throws {
        let values = try parseEveryWay("$8\r\na\r\nb\0c\r\n\r\n")
        #expect(values == [.bulkString(Array("a\r\nb\0c\r\n".utf8))])
    }

    @Test func nestedArraysWithEveryElementType() throws {
        let text = "*3\r\n$6\r\nstream\r\n*2\r\n*2\r\n$3\r\n1-0\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n*0\r\n:5\r\n+PONG\r\n"
        let values = try parseEveryWay(text)
        #expect(values == [
            .array([
                .bulkString(Array("stream".utf8)),
                .array([.array([.bulkString(Array("1-0".utf8)), .array([.bulkString([102]), .bulkString([118])])]), .array([])]),
                .integer(5),
            ]),
            .simpleString("PONG"),
        ])
    }

    @Test func partialRepliesWaitForTheirEnd() throws {
        var parser = RESPParser()
        parser.feed(Array("*2\r\n$3\r\nab".utf8))
        #expect(try parser.next() == nil)
        #expect(parser.hasPartialReply)
        parser.feed(Array("c\r\n".utf8))
        #expect(try parser.next() == nil, "one element of two")
        parser.feed(Array(":1\r".utf8))
        #expect(try parser.next() == nil, "a line without its LF")
        parser.feed(Array("\n".utf8))
        #expect(try parser.next() == .array([.bulkString(Array("abc".utf8)), .integer(1)]))
        #expect(!parser.hasPartialReply && parser.bufferedByteCount == 0)
    }

    @Test func aLargeArrayTricklingInIsParsedOnce() throws {
        // 20,000 elements fed 7 bytes at a time: linear, or this would take minutes.
        var text = "*20000\r\n"
        for index in 0..<20_000 { text += ":\(index)\r\n" }
        let bytes = Array(text.utf8)
        var parser = RESPParser()
        var result: RESPValue?
        var offset = 0
        while offset < bytes.count {
            parser.feed(bytes[offset..<min(offset + 7, bytes.count)])
            offset += 7
            if let value = try parser.next() { result = value }
        }
        #expect(result?.elements?.count == 20_000 && result?.elements?.last == .integer(19_999))
    }

    @Test(arguments: [
        ("?what\r\n", "unknown reply type"), (":12a\r\n", "not an integer"), (":\r\n", "not an integer"),
        (":99999999999999999999\r\n", "not an integer"), (":9223372036854775808\r\n", "out of range"),
        ("$-2\r\n", "negative"), ("*-5\r\n", "negative"), ("$3\r\nabcd\r\n", "not followed by CRLF"),
        ("+OK\n", "LF without CR"), ("+OK\rX\n", "CR not followed by LF"), ("$ 3\r\nabc\r\n", "not an integer"),
    ])
    func malformedRepliesAreProtocolErrors(_ input: (String, String)) {
        let error = refused(input.0)
        #expect(error?.description.contains(input.1) == true, "\(input.0.debugDescription): \(String(describing: error))")
    }

    @Test func limitsBoundWhatAServerCanMakeUsHold() {
        let limits = RESPParser.Limits(maxReplyBytes: 40, maxReplyElements: 3, maxDepth: 2, maxLineBytes: 16)
        #expect(refused("$34\r\n", limits: limits)?.exceedsLimits == true, "announced, before the bytes")
        #expect(refused("*4\r\n", limits: limits)?.description.contains("over 3 elements") == true)
        #expect(refused("*1\r\n*1\r\n*1\r\n:1\r\n", limits: limits)?.description.contains("nested") == true)
        #expect(refused("+" + String(repeating: "a", count: 40), limits: limits)?.description.contains("longer") == true)
        #expect(refused("*1\r\n*1\r\n:1\r\n$10\r\n0123456789\r\n", limits: limits) == nil, "at the limits is fine")
        #expect(refused("$33\r\n" + String(repeating: "b", count: 33) + "\r\n", limits: limits) == nil, "40 bytes exactly")
    }

    /// Issue 26: the bound is the whole reply's, nested elements included, not each part's.
    @Test func theBoundCountsTheWholeReply() {
        let limits = RESPParser.Limits(maxReplyBytes: 40, maxReplyElements: 3, maxDepth: 4, maxLineBytes: 16)
        let element = "$10\r\n0123456789\r\n"
        #expect(refused("*2\r\n" + element + element, limits: limits) == nil, "36 bytes")
        let over = refused("*3\r\n" + element + element + element, limits: limits)
        #expect(over?.exceedsLimits == true && over?.description.contains("40 bytes") == true, "\(String(describing: over))")
        #expect(refused("*2\r\n*2\r\n", limits: limits)?.description.contains("over 3 elements") == true, "2 + 2 elements")
        #expect(refused("*1\r\n+" + String(repeating: "c", count: 16) + "\r\n*1\r\n" + element, limits: limits) == nil,
                "each reply has its own bound")
        #expect(refused("+OK\rX", limits: limits)?.exceedsLimits == false, "malformed is not too large")
        #expect(try! parseEveryWay("*2\r\n" + element + element + "*2\r\n" + element + element, limits: limits).count == 2)
    }

    @Test func theDefaultBoundIs64MiBInAll() {
        #expect(RESPParser.Limits().maxReplyBytes == 64 << 20)
        var parser = RESPParser()
        parser.feed(Array("*2\r\n$40000000\r\n".utf8))
        #expect(throws: Never.self) { _ = try parser.next() }
        parser.feed([UInt8](repeating: 0, count: 40_000_000) + [13, 10] + Array("$30000000\r\n".utf8))
        #expect(throws: RESPParser.ProtocolError.self) { _ = try parser.next() }
    }

    @Test func commandsAreArraysOfBulkStrings() {
        #expect(RESPCommand("SET", "k", "a b\r\n").encoded == Array("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\na b\r\n\r\n".utf8))
        #expect(RESPCommand([[0, 255]]).encoded == [42, 49, 13, 10, 36, 50, 13, 10, 0, 255, 13, 10])
        #expect(RESPCommand("AUTH", "alice", "secret").description == "AUTH", "names only: arguments may be secrets")
    }
}
