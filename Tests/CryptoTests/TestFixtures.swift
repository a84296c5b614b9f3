import Foundation
import StoreRelayTestSupport

/// Shared fixtures: one openssl-generated PKI per test process (generating costs ~20 openssl
/// runs), and the location of /work/shared/vectors.
enum Fixtures {
    static let authority: TestCertificateAuthority = {
        do { return try TestCertificateAuthority() } catch { fatalError("cannot build the test CA with openssl: \(error)") }
    }()

    /// `../shared/vectors` from the package root (or `../../shared/vectors` from a worktree
    /// under `wt/`); `nil` when absent so tests can skip with a message.
    static let vectorsDirectory: String? = {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        for candidate in ["../shared/vectors", "../../shared/vectors"] {
            let path = root.appendingPathComponent(candidate).standardized.path
            if FileManager.default.fileExists(atPath: path + "/manifest.json") { return path }
        }
        return nil
    }()

    static func vector(_ relative: String) throws -> String {
        guard let directory = vectorsDirectory else { throw VectorsMissing() }
        return try String(contentsOfFile: directory + "/" + relative, encoding: .utf8)
    }

    struct VectorsMissing: Error, CustomStringConvertible {
        var description: String { "test vectors not found at ../shared/vectors relative to the package root" }
    }
}
