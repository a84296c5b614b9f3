import Foundation
import Testing
import StoreRelayVerification
import StoreRelayCore
import StoreRelayTestSupport

/// A clock stopped at one instant.
struct FixedClock: TimeSource {
    let time: Timestamp
    func now() -> Timestamp { time }
}

enum Fixtures {
    static let authority = TestCertificateAuthority.shared

    /// `TestPaths.vectors`; `nil` when absent, and the vector tests are then skipped.
    static let vectorsDirectory: String? = TestPaths.vectors?.path

    static let haveVectors = vectorsDirectory != nil

    static func vector(_ relative: String) throws -> String {
        guard let directory = vectorsDirectory else { throw Missing() }
        return try String(contentsOfFile: directory + "/" + relative, encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func vectorPath(_ relative: String) -> String { (vectorsDirectory ?? "/nonexistent") + "/" + relative }

    /// The manifest's `vectors` entries.
    static func manifest() throws -> [JSONValue] {
        try #require(JSONValue.parse(vector("manifest.json"))["vectors"]?.arrayValue)
    }

    /// Verifier trusting the openssl-generated test root only.
    static func testRootVerifier(_ configure: (inout VerifierConfiguration) -> Void = { _ in }) throws -> NotificationVerifier {
        var configuration = VerifierConfiguration(trustedRoots: [try Certificate(pemString: authority.rootPEM)])
        configure(&configuration)
        return try NotificationVerifier(configuration: configuration)
    }

    /// Verifier trusting Apple's mock-library test CA (certs/testCA.pem).
    static func appleTestCAVerifier(clock: any TimeSource = WallClock()) throws -> NotificationVerifier {
        let root = try Certificate(pemString: vector("mock-apple-library/certs/testCA.pem"))
        return try NotificationVerifier(configuration: VerifierConfiguration(trustedRoots: [root], clock: clock))
    }

    struct Missing: Error {}
}

/// Runs `body`, expecting it to throw a `VerificationError`, and returns that error; records an
/// issue (and returns nil) when it succeeds or throws anything else.
func verificationError(_ body: () throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) -> VerificationError? {
    do {
        try body()
        Issue.record("expected a VerificationError, but verification succeeded", sourceLocation: sourceLocation)
        return nil
    } catch let error as VerificationError {
        return error
    } catch {
        Issue.record("expected a VerificationError, got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

/// Equal JSON, comparing numbers by value (the manifest and the payload may spell them differently).
func sameJSON(_ a: JSONValue?, _ b: JSONValue?) -> Bool {
    switch (a, b) {
    case (.number(let x)?, .number(let y)?): return x.doubleValue == y.doubleValue
    case (nil, .null?), (.null?, nil): return true
    default: return a == b
    }
}

/// A notification payload in the shape Apple sends, as JSON text.
func notificationPayload(
    type: String = "DID_RENEW", environment: String = "Sandbox", bundleId: String = "com.example.app",
    signedDate: Int64? = nil, extraData: String = ""
) -> String {
    let date = signedDate ?? Timestamp.now().milliseconds
    return #"{"notificationType":"\#(type)","notificationUUID":"\#(UUID().uuidString.lowercased())","data":{"appAppleId":1234,"bundleId":"\#(bundleId)","bundleVersion":"7","environment":"\#(environment)"\#(extraData)},"version":"2.0","signedDate":\#(date)}"#
}
