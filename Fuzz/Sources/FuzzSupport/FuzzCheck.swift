#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Checks an invariant of a fuzz target.
///
/// A violation must look like a crash to libFuzzer so that it saves the input as an artifact:
/// the sentence goes to stderr, then `abort()` (libFuzzer handles SIGABRT as a crash). Unlike
/// `precondition`, the message survives an optimized build, so the log says what broke.
public func fuzzCheck(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
    guard !condition() else { return }
    let text = "fuzz invariant violated: \(message())\n"
    var bytes = Array(text.utf8)
    _ = bytes.withUnsafeMutableBytes { write(2, $0.baseAddress, $0.count) }
    abort()
}

/// A small deterministic generator (SplitMix64), seeded from the input itself, so a saved
/// crash input replays exactly the same choices.
public struct SplitMix64 {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    /// FNV-1a of `bytes`: the seed for choices derived from an input.
    public init(hashing bytes: [UInt8]) {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        self.init(seed: hash)
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A value in `1...upper`.
    public mutating func length(upTo upper: Int) -> Int { Int(next() % UInt64(upper)) + 1 }
}

/// The bytes libFuzzer passes, copied into an array (an empty input may come with a null pointer).
public func fuzzInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> [UInt8] {
    guard let data, size > 0 else { return [] }
    return Array(UnsafeBufferPointer(start: data, count: size))
}
