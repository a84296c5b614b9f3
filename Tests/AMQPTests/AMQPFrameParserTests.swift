@testable import StoreRelayNet
import StoreRelayTestSupport
import Testing

/// The frame parser on its own: every chunking gives the same frames, and every malformed
/// stream is a final error.
struct AMQPFrameParserTests {
    private func frames(_ list: [AMQPFrame]) -> [UInt8] {
        var bytes: [UInt8] = []
        for frame in list { frame.encode(into: &bytes) }
        return bytes
    }

    private func parse(_ stream: [UInt8], chunk: Int, maxFrameSize: Int = 131_072) -> (frames: [AMQPFrame], error: AMQPFrameParser.ProtocolError?) {
        var parser = AMQPFrameParser(maxFrameSize: maxFrameSize)
        var out: [AMQPFrame] = []
        var offset = 0
        while offset < stream.count {
            let end = min(offset + chunk, stream.count)
            parser.feed(stream[offset..<end])
            offset = end
            do {
                while let frame = try parser.next() { out.append(frame) }
            } catch {
                return (out, error)
            }
        }
        return (out, nil)
    }

    @Test func everyChunkingGivesTheSameFrames() {
        let list = [
            AMQPFrame(.method, channel: 0, payload: [0, 10, 0, 30, 0, 1, 0, 2, 0, 0, 0, 60]),
            AMQPFrame(.heartbeat, channel: 0, payload: []),
            AMQPFrame(.header, channel: 1, payload: Array(repeating: 7, count: 40)),
            AMQPFrame(.body, channel: 1, payload: Array(0..<200).map { UInt8($0) }),
        ]
        let stream = frames(list)
        for chunk in [1, 2, 3, 7, 8, 13, stream.count] {
            let result = parse(stream, chunk: chunk)
            #expect(result.error == nil)
            #expect(result.frames == list, "chunks of \(chunk)")
        }
    }

    @Test func aLongStreamSplitMidFrameKeepsTheBufferSmall() throws {
        var parser = AMQPFrameParser()
        var one: [UInt8] = []
        AMQPFrame(.method, channel: 1, payload: [0, 60, 0, 80, 0, 0, 0, 0, 0, 0, 0, 1, 0]).encode(into: &one)
        // Each read ends halfway through a frame: a frame and a half, then the rest and so on.
        let stream = Array(repeating: one, count: 1000).flatMap { $0 }
        var offset = 0
        var count = 0
        while offset < stream.count {
            let end = min(offset + one.count + one.count / 2, stream.count)
            parser.feed(stream[offset..<end])
            offset = end
            while try parser.next() != nil { count += 1 }
            #expect(parser.bufferedByteCount < one.count)
            #expect(parser.storedByteCount < 3 * one.count)
        }
        #expect(count == 1000)
    }

    @Test func aWrongFrameEndIsFinal() {
        var stream = frames([AMQPFrame(.method, channel: 0, payload: [1, 2, 3])])
        stream[stream.count - 1] = 0
        var parser = AMQPFrameParser()
        parser.feed(stream)
        #expect(throws: AMQPFrameParser.ProtocolError.self) { try parser.next() }
        parser.feed(frames([AMQPFrame(.heartbeat, channel: 0, payload: [])]))
        #expect(throws: AMQPFrameParser.ProtocolError.self) { try parser.next() }
    }

    @Test func aFrameAboveFrameMaxIsRefusedBeforeItsBodyArrives() {
        let stream = frames([AMQPFrame(.body, channel: 1, payload: Array(repeating: 0, count: 5000))])
        let result = parse(Array(stream.prefix(7)), chunk: 7, maxFrameSize: 4096)
        #expect(result.error?.description.contains("frame-max") == true)
    }

    @Test func anUnknownTypeOrAChannelHeartbeatIsAnError() {
        #expect(parse([9, 0, 0, 0, 0, 0, 0, 0xCE], chunk: 8).error?.description.contains("unknown frame type 9") == true)
        #expect(parse([8, 0, 1, 0, 0, 0, 0, 0xCE], chunk: 8).error?.description.contains("heartbeat on channel 1") == true)
    }

    @Test func aBrokerOfAnotherVersionIsNamed() {
        let answer: [UInt8] = Array("AMQP".utf8) + [0, 1, 0, 0]
        for chunk in [1, 3, 8] {
            let result = parse(answer, chunk: chunk)
            #expect(result.error?.description.contains("protocol header 1-0-0") == true, "chunks of \(chunk)")
        }
        // Half a header waits for the rest instead of guessing.
        #expect(parse(Array(answer.prefix(5)), chunk: 5).error == nil)
    }

    @Test func truncatedMethodsAreErrorsNotCrashes() throws {
        let tune: [UInt8] = [0, 10, 0, 30, 0, 1, 0, 2, 0, 0, 0, 60]
        for length in 0..<tune.count {
            #expect(throws: AMQPFrameParser.ProtocolError.self) { try AMQPIncoming.decode(Array(tune.prefix(length))) }
        }
        #expect(try AMQPIncoming.decode(tune) == .connectionTune(channelMax: 1, frameMax: 0x20000, heartbeat: 60))
    }

    /// The fuzz target's invariants (Fuzz/Sources/FuzzAMQPFrames) over seeded mutations of a
    /// real broker's stream, so every test run exercises them a little.
    @Test func mutatedStreamsParseTheSameInEveryChunking() throws {
        var generator = SeededGenerator(seed: 29)
        let base = Broker.start() + Broker.tune() + Broker.openOk + Broker.channelOpenOk + Broker.selectOk
            + Broker.returned(messageId: "x") + Broker.ack(1, multiple: true)
        for _ in 0..<300 {
            var stream = base
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                stream[Int.random(in: 0..<stream.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            }
            let whole = parse(stream, chunk: stream.count)
            let bytewise = parse(stream, chunk: 1)
            #expect(whole.frames == bytewise.frames && whole.error == bytewise.error)
            for frame in whole.frames where frame.kind == .method { _ = try? AMQPIncoming.decode(frame.payload) }
        }
    }
}
