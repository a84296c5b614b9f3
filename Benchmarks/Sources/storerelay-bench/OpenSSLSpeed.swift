import BenchKit

/// `openssl speed ecdsap256`: the crypto ceiling the gateway is compared with, measured in the
/// same run so the ratio holds on a noisy machine.
struct OpenSSLSpeed {
    let signsPerSecond: Double
    let verificationsPerSecond: Double

    /// Runs `openssl speed -seconds S [-multi N] ecdsap256` and reads its summary line
    /// ` 256 bits ecdsa (nistp256)   0.0000s   0.0001s  42841.8  14778.9`.
    static func measure(seconds: Int, processes: Int, scratch: String) throws -> OpenSSLSpeed {
        guard let openssl = Files.which("openssl") else { throw BenchError("openssl is not installed") }
        var arguments = [openssl, "speed", "-seconds", "\(seconds)"]
        if processes > 1 { arguments += ["-multi", "\(processes)"] }
        arguments.append("ecdsap256")
        let output = scratch + "/openssl-speed-\(processes).txt"
        let process = try ChildProcess(arguments, stdout: output, stderr: output + ".err")
        guard process.wait() == 0 else { throw BenchError("\(process.command) failed: \(readText(output + ".err") ?? "")") }
        let text = readText(output) ?? ""
        guard let line = text.split(separator: "\n").last(where: { $0.contains("ecdsa (nistp256)") }) else {
            throw BenchError("no nistp256 line in the output of \(process.command)")
        }
        let numbers = line.split(separator: " ").compactMap { Double($0) }
        guard numbers.count >= 2 else { throw BenchError("cannot read: \(line)") }
        return OpenSSLSpeed(signsPerSecond: numbers[numbers.count - 2], verificationsPerSecond: numbers[numbers.count - 1])
    }
}
