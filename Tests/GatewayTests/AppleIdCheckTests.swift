import Foundation
import Testing
import StoreRelayGateway
import StoreRelayConfig
import StoreRelayCore
import StoreRelayTestSupport

/// `apple-id` applies to production V2 notifications only (issue 25, point 1): V1 bodies carry
/// no `appAppleId`, so checking them quarantined every production V1 notification of an app
/// with an `apple-id` — answered 200, never retried, delivered nowhere.
@Suite struct AppleIdCheckTests {
    static let secret = "s3cret-primary"

    /// A gateway configuration declaring com.acme.journal with apple-id 1234567890 and
    /// trusting the generated test CA.
    static func configuration() throws -> GatewayConfiguration {
        let directory = try TestPaths.makeTemporaryDirectory("apple-id")
        let root = directory.appendingPathComponent("root.pem")
        try TestCertificateAuthority.shared.rootPEM.write(to: root, atomically: true, encoding: .utf8)
        return try GatewayConfiguration.parse(text: """
            data \(directory.path)/data
            trust-root \(root.path)
            shared-secret \(secret)
            app com.acme.journal {
                apple-id 1234567890
            }
            destination all file \(directory.path)/queue
            route * * * -> all
            """)
    }

    static func v1Body(environment: String) -> [UInt8] {
        Array("""
            {"notification_type":"DID_RENEW","password":"\(secret)","environment":"\(environment)",\
            "bid":"com.acme.journal","bvrs":"42","auto_renew_status":"true",\
            "unified_receipt":{"environment":"Production","status":0,"latest_receipt":"ZmFrZQ==",\
            "latest_receipt_info":[{"transaction_id":"1000000000000002","original_transaction_id":"1000000000000001",\
            "product_id":"monthly","purchase_date_ms":"1606292762000","expires_date_ms":"1606293062000"}],\
            "pending_renewal_info":[]}}
            """.utf8)
    }

    /// A production V2 notification of `type`, with `appAppleId` in its data when given.
    static func v2Body(type: String, appAppleId: Int64?) throws -> [UInt8] {
        // The authority first: its certificates are valid from the moment it is created.
        let authority = TestCertificateAuthority.shared
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let appleId = appAppleId.map { "\"appAppleId\":\($0)," } ?? ""
        let jws = try authority.signJWS(payload: """
            {"notificationType":"\(type)","notificationUUID":"\(UUID().uuidString.lowercased())","version":"2.0",\
            "signedDate":\(now),"data":{\(appleId)"bundleId":"com.acme.journal","bundleVersion":"42",\
            "environment":"Production"}}
            """)
        return Array("{\"signedPayload\":\"\(jws)\"}".utf8)
    }

    func verdict(_ body: [UInt8]) throws -> OfflineVerification.Verdict {
        try OfflineVerification.verify(body: body, configuration: Self.configuration())
    }

    @Test func aProductionV1NotificationIsAccepted() throws {
        let verdict = try verdict(Self.v1Body(environment: "PROD"))
        #expect(verdict.quarantineReason == nil, "\(verdict.quarantineReason ?? "")")
        #expect(verdict.eventJSON.contains("\"environment\":\"production\""))
    }

    @Test func aProductionV2NotificationMustCarryTheAppleId() throws {
        #expect(try verdict(Self.v2Body(type: "DID_RENEW", appAppleId: 1_234_567_890)).quarantineReason == nil)
        let missing = try verdict(Self.v2Body(type: "DID_RENEW", appAppleId: nil)).quarantineReason
        #expect(missing == "appAppleId none does not match apple-id 1234567890 of com.acme.journal")
        let wrong = try verdict(Self.v2Body(type: "DID_RENEW", appAppleId: 42)).quarantineReason
        #expect(wrong == "appAppleId 42 does not match apple-id 1234567890 of com.acme.journal")
    }

    /// A TEST notification is checked only when it carries an id: Apple's may carry none.
    @Test func aTestNotificationIsCheckedOnlyWhenItCarriesTheId() throws {
        #expect(try verdict(Self.v2Body(type: "TEST", appAppleId: nil)).quarantineReason == nil)
        #expect(try verdict(Self.v2Body(type: "TEST", appAppleId: 1_234_567_890)).quarantineReason == nil)
        #expect(try verdict(Self.v2Body(type: "TEST", appAppleId: 42)).quarantineReason?.hasPrefix("appAppleId 42") == true)
    }
}

/// The ingress quarantines an event whose id, type or subtype no HTTP header can carry
/// (issue 25, point 5): kept and answered 200, never routed to destinations that would fail
/// every attempt on it.
@Suite struct UnsendableFieldIngressTests {
    @Test func aTypeWithALineBreakIsQuarantinedAsNotUnderstood() throws {
        let body = try AppleIdCheckTests.v2Body(type: #"DID_RENEW\r\nX-Injected: 1"#, appAppleId: 1_234_567_890)
        let verdict = try OfflineVerification.verify(body: body, configuration: AppleIdCheckTests.configuration())
        #expect(verdict.quarantineReason == "not understood: the event's type holds a control character, which HTTP "
            + "forbids in its StoreRelay-Type header; it cannot be sent, however often it is tried")
        let tab = try AppleIdCheckTests.v2Body(type: #"DID_RENEW\tX"#, appAppleId: 1_234_567_890)
        #expect(try OfflineVerification.verify(body: tab, configuration: AppleIdCheckTests.configuration()).quarantineReason == nil)
    }
}
