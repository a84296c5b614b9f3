import Testing
@testable import StoreRelayGateway
import StoreRelayGooglePlay
import StoreRelayConfig
import StoreRelayDelivery
import StoreRelayCore
import StoreRelayTestSupport

/// What the gateway decides about one Google Play push, without I/O: refused (401 or 503),
/// quarantined (and why), or accepted and routed; and the enrichment seam's rerouting.
@Suite struct PlayProcessorTests {
    static let signer = try! PlayPushSigner(kids: ["key-1"])
    static let otherAudience = "https://relay.example.test/other"
    static let otherAccount = "other-push@storerelay-test.iam.gserviceaccount.com"

    let processor: PlayProcessor
    let keys = try! JSONWebKeySet(json: Array(try! signer.keySetDocument().utf8))
    let now = Timestamp.now()

    init() throws {
        let configuration = try GatewayConfiguration.parse(text: """
            path /play play
            play com.acme.journal {
                push-audience \(PlayPushSigner.audience)
                push-account \(PlayPushSigner.account)
            }
            play com.acme.other {
                push-audience \(Self.otherAudience)
                push-account \(Self.otherAccount)
            }
            destination live file ./live
            destination test file ./test
            route production com.acme.journal SUBSCRIPTION_RENEWED -> live
            route sandbox * * -> test
            """, fileName: "routes.conf")
        processor = PlayProcessor(configuration)
    }

    func process(_ body: String, token: String? = nil) throws(PlayProcessor.Refusal) -> StoredNotification {
        let authorization = "Bearer " + ((try? token ?? Self.signer.validToken(now: now.seconds)) ?? "")
        return try processor.process(authorization: authorization, body: Array(body.utf8), keys: keys, receivedAt: now)
    }

    @Test func acceptsAndRoutesAValidPushKeepingItsBody() throws {
        let body = PlayPushSigner.body(messageId: "1", data: PlayPushSigner.subscriptionNotification(type: 2))
        let stored = try process(body)
        #expect(stored.disposition == .accept)
        #expect(stored.id == "1")
        #expect(stored.destinations == ["live"])
        #expect(stored.body == Array(body.utf8))
        // Another type, no route: accepted and unrouted (the delivery engine dead-letters it).
        let canceled = try process(PlayPushSigner.body(messageId: "2", data: PlayPushSigner.subscriptionNotification(type: 3)))
        #expect(canceled.disposition == .accept && canceled.destinations.isEmpty)
    }

    @Test func quarantinesWhatIsNotForThisGateway() throws {
        func reason(_ stored: StoredNotification) -> String {
            if case .quarantine(let why) = stored.disposition { return why }
            return "accepted"
        }
        let undeclared = try process(PlayPushSigner.body(messageId: "3", data: PlayPushSigner.subscriptionNotification(type: 2, package: "com.evil.app")))
        #expect(reason(undeclared).contains("com.evil.app is not declared"))
        #expect(undeclared.destinations.isEmpty)
        // com.acme.other's package pushed through com.acme.journal's subscription.
        let crossed = try process(PlayPushSigner.body(messageId: "4", data: PlayPushSigner.subscriptionNotification(type: 2, package: "com.acme.other")))
        #expect(reason(crossed).contains("through the push subscription of audience \(PlayPushSigner.audience)"))
        let otherToken = try Self.signer.token(claims: PlayPushSigner.claims(now: now.seconds, audience: Self.otherAudience, email: Self.otherAccount))
        let own = try process(PlayPushSigner.body(messageId: "5", data: PlayPushSigner.subscriptionNotification(type: 2, package: "com.acme.other")),
                              token: otherToken)
        #expect(own.disposition == .accept)
        let stale = try process(PlayPushSigner.body(messageId: "6", data: PlayPushSigner.subscriptionNotification(
            type: 2, eventTime: now.milliseconds - 31 * 86_400_000)))
        #expect(reason(stale).hasPrefix("stale"))
        let notPush = try process(#"{"hello":"world"}"#)
        #expect(reason(notPush).hasPrefix("not a Pub/Sub push"))
        #expect(notPush.id.count == 36, "a UUID-shaped hash of the body: \(notPush.id)")
        #expect(notPush.event.type == "UNREADABLE")
        let notNotification = try process(PlayPushSigner.body(messageId: "7", data: "[]"))
        #expect(reason(notNotification).hasPrefix("not a DeveloperNotification"))
        #expect(notNotification.id == "7")
    }

    @Test func refusesWithoutAuthenticationBeforeReadingTheBody() {
        let body = PlayPushSigner.body(messageId: "8", data: PlayPushSigner.subscriptionNotification(type: 2))
        #expect(throws: PlayProcessor.Refusal.self) { try process(body, token: "x.y.z") }
        do {
            _ = try processor.process(authorization: nil, body: Array("garbage".utf8), keys: keys, receivedAt: now)
            Issue.record("an unauthenticated body was kept")
        } catch {
            guard case .unauthorized = error else {
                Issue.record("\(error)")
                return
            }
        }
        let unknown = try? Self.signer.token(kid: "key-9", claims: PlayPushSigner.claims(now: now.seconds), signWith: "key-1")
        #expect(throws: PlayProcessor.Refusal.unknownKey("key-9")) { try process(body, token: unknown) }
        #expect(throws: PlayProcessor.Refusal.noKeys) {
            try processor.process(authorization: "Bearer " + (unknown ?? ""), body: Array(body.utf8), keys: nil, receivedAt: now)
        }
    }

    @Test func anEnrichedSandboxEventIsRoutedAgain() throws {
        let stored = try process(PlayPushSigner.body(messageId: "9", data: PlayPushSigner.subscriptionNotification(type: 2)))
        #expect(stored.destinations == ["live"])
        let answer = try #require(try JSONValue.parse(#"{"subscriptionState":"SUBSCRIPTION_STATE_ACTIVE","testPurchase":{}}"#).objectValue)
        let rerouted = processor.rerouted(stored, with: PlayEvent.enriched(stored.event, with: answer))
        #expect(rerouted.event.environment == .sandbox)
        #expect(rerouted.destinations == ["test"])
        #expect(rerouted.body == stored.body && rerouted.id == stored.id)
    }
}
