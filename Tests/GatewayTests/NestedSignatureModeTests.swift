import Foundation
import Testing
@testable import StoreRelayGateway
import StoreRelayConfig
import StoreRelayDelivery
import StoreRelayCore
import StoreRelayTestSupport

/// `verify-nested` through the configuration (issue 31): by default a nested JWS with the
/// notification's own header is covered by the notification's signature; `verify-nested yes`
/// and `storerelay verify` check each nested JWS on its own, and a nested failure is
/// quarantined as "not understood", as before.
@Suite struct NestedSignatureModeTests {
    static let authority = TestCertificateAuthority.shared

    static func configuration(_ extra: String = "") throws -> GatewayConfiguration {
        let directory = try TestPaths.makeTemporaryDirectory("verify-nested")
        let root = directory.appendingPathComponent("root.pem")
        try authority.rootPEM.write(to: root, atomically: true, encoding: .utf8)
        return try GatewayConfiguration.parse(text: """
            data \(directory.path)/data
            trust-root \(root.path)
            \(extra)
            destination all file \(directory.path)/queue
            route * * * -> all
            """)
    }

    /// A sandbox DID_RENEW whose nested transaction is `nested` (a compact JWS).
    static func body(nested: String) throws -> [UInt8] {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let jws = try authority.signJWS(payload: """
            {"notificationType":"DID_RENEW","notificationUUID":"\(UUID().uuidString.lowercased())","version":"2.0",\
            "signedDate":\(now),"data":{"bundleId":"com.acme.journal","environment":"Sandbox",\
            "signedTransactionInfo":"\(nested)"}}
            """)
        return Array("{\"signedPayload\":\"\(jws)\"}".utf8)
    }

    static func transaction(variant: TestCertificateAuthority.Variant = .valid) throws -> String {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        return try authority.signJWS(payload: """
            {"transactionId":"1000000000000002","originalTransactionId":"1000000000000001","bundleId":"com.acme.journal",\
            "environment":"Sandbox","signedDate":\(now)}
            """, variant: variant)
    }

    /// A nested transaction with the notification's header whose own signature is broken.
    static func brokenTransaction() throws -> String {
        let other = try authority.signJWS(payload: #"{"other":true}"#)
        return try transaction().split(separator: ".")[0...1].joined(separator: ".") + "." + other.split(separator: ".")[2]
    }

    func process(_ body: [UInt8], _ configuration: GatewayConfiguration) throws -> StoredNotification {
        let processor = NotificationProcessor(
            verifier: try Gateway.makeVerifier(configuration, clock: WallClock()),
            policy: AcceptancePolicy(configuration), routes: configuration.routes)
        return try processor.process(body: body, pathEnvironment: nil, receivedAt: .now())
    }

    @Test func theDefaultTakesANestedJWSWithTheNotificationsHeaderAsCovered() throws {
        let configuration = try Self.configuration()
        #expect(!configuration.verifyNested)
        let stored = try process(Self.body(nested: Self.brokenTransaction()), configuration)
        #expect(stored.disposition == .accept)
        #expect(stored.event.transactionId == "1000000000000002")
        #expect(stored.destinations == ["all"])
    }

    @Test func verifyNestedYesQuarantinesABrokenNestedSignature() throws {
        let stored = try process(Self.body(nested: Self.brokenTransaction()), Self.configuration("verify-nested yes"))
        guard case .quarantine(let reason) = stored.disposition else {
            Issue.record("verify-nested yes accepted a broken nested signature: \(stored.disposition)")
            return
        }
        #expect(reason.hasPrefix("not understood: data.signedTransactionInfo: the ES256 signature does not match"), "\(reason)")
        #expect(stored.destinations.isEmpty)
    }

    /// A nested chain other than the notification's is checked in full by default, and its
    /// failure quarantined exactly as before.
    @Test func aNestedChainOtherThanTheNotificationsIsQuarantinedAsBefore() throws {
        for extra in ["", "verify-nested yes"] {
            let stored = try process(Self.body(nested: Self.transaction(variant: .unknownRoot)), Self.configuration(extra))
            guard case .quarantine(let reason) = stored.disposition else {
                Issue.record("a nested JWS of an untrusted chain was accepted (\(extra))")
                continue
            }
            #expect(reason.hasPrefix("not understood: data.signedTransactionInfo: the x5c chain does not lead to a trusted root"), "\(reason)")
        }
        // A sound one is accepted either way.
        for extra in ["", "verify-nested yes"] {
            #expect(try process(Self.body(nested: Self.transaction()), Self.configuration(extra)).disposition == .accept)
        }
    }

    /// `storerelay verify` checks all three signatures whatever the configuration says.
    @Test func offlineVerificationChecksEveryNestedSignature() throws {
        let body = try Self.body(nested: Self.brokenTransaction())
        let verdict = try OfflineVerification.verify(body: body, configuration: Self.configuration())
        #expect(verdict.quarantineReason?.hasPrefix("not understood: data.signedTransactionInfo: the ES256 signature does not match") == true,
                "\(verdict.quarantineReason ?? "accepted")")
        let sound = try OfflineVerification.verify(body: Self.body(nested: Self.transaction()), configuration: Self.configuration())
        #expect(sound.quarantineReason == nil)
    }

    /// The canonical body is written without a JSON tree (issue 31), byte for byte as the
    /// serializer wrote it: canonical forwarding is unchanged.
    @Test func theCanonicalBodyIsWhatTheSerializerWrites() throws {
        let jws = try Self.transaction()
        for signedPayload in [jws, "a\"b\\c\u{2028}é", "x"] {
            let expected = JSONValue.object(JSONObject([("signedPayload", .string(signedPayload))])).serializedBytes()
            #expect(NotificationBody.canonical(signedPayload: signedPayload) == expected)
            #expect(NotificationBody.forwardable(.v2(signedPayload: signedPayload), received: []) == expected)
        }
    }
}
