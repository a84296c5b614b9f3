import Foundation
import StoreRelayTestSupport

/// Shared fixtures: one openssl-generated PKI per test process (generating costs ~20 openssl
/// runs), and the location of ../shared/vectors.
enum Fixtures {
    static let authority = TestCertificateAuthority.shared

    /// `TestPaths.vectors`; `nil` when absent so tests can skip with a message.
    static let vectorsDirectory: String? = TestPaths.vectors?.path

    static func vector(_ relative: String) throws -> String {
        guard let directory = vectorsDirectory else { throw VectorsMissing() }
        return try String(contentsOfFile: directory + "/" + relative, encoding: .utf8)
    }

    /// Bytes from hexadecimal text (two digits a byte, either case).
    static func bytes(hex: String) -> [UInt8] {
        let digits = Array(hex.utf8)
        return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16)! }
    }

    /// The DER `ECDSA-Sig-Value` of a raw `R‖S`, encoded here independently of the library
    /// under test (minimal INTEGERs, a leading zero where the top bit is set).
    static func derSignature(raw: [UInt8]) -> [UInt8] {
        func integer(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
            var value = Array(bytes.drop(while: { $0 == 0 }))
            if value.first.map({ $0 & 0x80 != 0 }) ?? true { value.insert(0, at: 0) }
            return [0x02, UInt8(value.count)] + value
        }
        let body = integer(raw[0..<32]) + integer(raw[32..<64])
        return [0x30, UInt8(body.count)] + body
    }

    struct VectorsMissing: Error, CustomStringConvertible {
        var description: String { "test vectors not found at ../shared/vectors relative to the package root" }
    }
}
