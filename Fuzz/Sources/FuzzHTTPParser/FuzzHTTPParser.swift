import FuzzSupport
import StoreRelayNet

/// libFuzzer target for `HTTPRequestParser`: arbitrary bytes as a connection's input stream.
///
/// Each input is parsed several ways, and every way must give the same outcome, because the
/// parser promises that chunking never matters (STYLE "Feed every decoder every chunking"):
/// all at once, one byte at a time, and in chunks whose lengths come from a generator seeded
/// with the input's hash (so a saved crash replays the same split). That is done with the
/// production limits and again with tiny limits, so the limit paths (413, 431) are reached
/// by short inputs too. Any crash, hang or difference is a finding.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTPParser(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = fuzzInput(data, size)
    var random = SplitMix64(hashing: input)
    let limitChoices = [
        HTTPRequestParser.Limits(),
        HTTPRequestParser.Limits(maxHeaderBytes: 64 + Int(random.next() % 64), maxBodyBytes: Int(random.next() % 32)),
    ]
    for limits in limitChoices {
        let whole = ParseRun(input, limits: limits, chunkLengths: { _ in Int.max })
        let bytewise = ParseRun(input, limits: limits, chunkLengths: { _ in 1 })
        let bound = random.length(upTo: 64)
        let split = ParseRun(input, limits: limits, chunkLengths: { _ in random.length(upTo: bound) })
        whole.expectSame(as: bytewise, "one byte at a time")
        whole.expectSame(as: split, "chunks of 1...\(bound) bytes")
    }
    return 0
}
