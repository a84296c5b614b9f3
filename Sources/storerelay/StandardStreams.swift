#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes `text` and a newline to stdout with `write(2)`; `stdout` the `FILE*` is not
/// concurrency-safe under Swift 6.
func writeStandardOutput(_ text: String) { writeAll(fd: 1, text + "\n") }

/// Writes `text` and a newline to stderr.
func writeStandardError(_ text: String) { writeAll(fd: 2, text + "\n") }

private func writeAll(fd: Int32, _ text: String) {
    let bytes = Array(text.utf8)
    bytes.withUnsafeBytes { buffer in
        var offset = 0
        while offset < buffer.count {
            let n = write(fd, buffer.baseAddress! + offset, buffer.count - offset)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return }
            offset += n
        }
    }
}

/// Reads all of standard input (for `storerelay verify -`).
func readStandardInput() -> [UInt8] {
    var result: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = chunk.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
        if n < 0 && errno == EINTR { continue }
        if n <= 0 { break }
        result.append(contentsOf: chunk[0..<n])
    }
    return result
}
