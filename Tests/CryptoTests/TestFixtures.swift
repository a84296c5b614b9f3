import Foundation
import StoreRelayTestSupport

/// Shared fixtures: one openssl-generated PKI per test process (generating costs ~20 openssl
/// runs), and the location of /work/shared/vectors.
enum Fixtures {
    static let authority = TestCertificateAuthority.shared

    /// `TestPaths.vectors`; `nil` when absent so tests can skip with a message.
    static let vectorsDirectory: String? = TestPaths.vectors?.path

    static func vector(_ relative: String) throws -> String {
        guard let directory = vectorsDirectory else { throw VectorsMissing() }
        return try String(contentsOfFile: directory + "/" + relative, encoding: .utf8)
    }

    struct VectorsMissing: Error, CustomStringConvertible {
        var description: String { "test vectors not found at ../shared/vectors relative to the package root" }
    }
}
