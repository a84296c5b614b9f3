import Foundation
import StoreRelayVerification
import StoreRelaySimulator
import StoreRelayCore
import StoreRelayTestSupport

/// A clock stuck at one instant, so dates in notifications are exact.
struct FixedClock: TimeSource {
    let instant: Timestamp
    func now() -> Timestamp { instant }
}

enum SimulatorFixtures {
    /// 2026-05-01T12:00:00.250Z
    static let instant = Timestamp(milliseconds: 1_777_636_800_250)

    /// A dev CA created in a fresh temporary data directory.
    static func authority(clock: any TimeSource = FixedClock(instant: instant)) throws -> DevCertificateAuthority {
        let data = try TestPaths.makeTemporaryDirectory("storerelay-simulator").path + "/data"
        return try DevCertificateAuthority.loadOrCreate(dataDirectory: data, clock: clock)
    }

    /// A verifier that trusts only `authority`'s root (what `trust-root` configures).
    static func verifier(trusting authority: DevCertificateAuthority) throws -> NotificationVerifier {
        try NotificationVerifier(configuration: VerifierConfiguration(trustedRoots: [authority.root]))
    }

    /// The permission bits of a file.
    static func mode(_ path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }
}
