import FuzzSupport
import StoreRelayNet

/// libFuzzer target for `AMQPFrameParser` and `AMQPIncoming.decode`: arbitrary bytes as what
/// an AMQP broker (or anything pretending to be one) sends. Each input is parsed at once, one
/// byte at a time and in seeded chunks, with the client's frame-max and the spec's minimum;
/// every way must give the same frames and the same verdict. Checked besides: an error is
/// final; no frame exceeds frame-max; every frame re-encodes to exactly the bytes it was cut
/// from; decoding any method payload returns or throws, never traps.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAMQPFrames(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = fuzzInput(data, size)
    var random = SplitMix64(hashing: input)
    for maxFrameSize in [131_072, 4096] {
        let whole = FrameRun(input, maxFrameSize: maxFrameSize, chunkLengths: { Int.max })
        let bytewise = FrameRun(input, maxFrameSize: maxFrameSize, chunkLengths: { 1 })
        let bound = random.length(upTo: 64)
        let split = FrameRun(input, maxFrameSize: maxFrameSize, chunkLengths: { random.length(upTo: bound) })
        fuzzCheck(whole.frames == bytewise.frames && whole.error == bytewise.error,
                  "one byte at a time: \(bytewise.summary); at once: \(whole.summary)")
        fuzzCheck(whole.frames == split.frames && whole.error == split.error,
                  "chunks of 1...\(bound): \(split.summary); at once: \(whole.summary)")
        var encoded: [UInt8] = []
        for frame in whole.frames {
            fuzzCheck(frame.payload.count + AMQPFrame.overhead <= maxFrameSize, "a frame of \(frame.payload.count) bytes passed frame-max")
            frame.encode(into: &encoded)
            if frame.kind == .method { _ = try? AMQPIncoming.decode(frame.payload) }
        }
        fuzzCheck(Array(input.prefix(encoded.count)) == encoded, "the frames do not re-encode to the bytes they came from")
    }
    return 0
}

struct FrameRun {
    private(set) var frames: [AMQPFrame] = []
    private(set) var error: AMQPFrameParser.ProtocolError?

    var summary: String { "\(frames.count) frames, error \(error.map(\.description) ?? "none")" }

    init(_ stream: [UInt8], maxFrameSize: Int, chunkLengths: () -> Int) {
        var parser = AMQPFrameParser(maxFrameSize: maxFrameSize)
        var offset = 0
        do {
            while offset < stream.count {
                let end = offset + min(chunkLengths(), stream.count - offset)
                parser.feed(stream[offset..<end])
                offset = end
                while let frame = try parser.next() { frames.append(frame) }
            }
        } catch {
            self.error = error
            parser.feed([8, 0, 0, 0, 0, 0, 0, 0xCE])
            do {
                _ = try parser.next()
                fuzzCheck(false, "after \(error) the parser read on")
            } catch let again {
                fuzzCheck(again == error, "\(again) thrown after \(error)")
            }
        }
    }
}
