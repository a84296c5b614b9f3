import Foundation
import Testing
import StoreRelaySimulator
import StoreRelayGooglePlay
import StoreRelayCrypto
import StoreRelayCore
import StoreRelayTestSupport

/// `simulate --store play`'s pushes: every notification type in the member Google's
/// reference puts it in, wrapped as Pub/Sub pushes it, with a token that verifies against the
/// dev key set as served and carries the claims a gateway checks.
@Suite struct PlayPushTests {
    static func keys() throws -> PlayDevKey {
        try PlayDevKey.loadOrCreate(dataDirectory: TestPaths.makeTemporaryDirectory("storerelay-dev-play").path)
    }

    static func decode(_ segment: Substring) throws -> JSONValue {
        try JSONValue.parse(try #require(Base64.urlDecode(segment)))
    }

    @Test func everyTypeIsBuiltInItsMember() throws {
        let factory = PlayPushFactory(key: try Self.keys())
        let names = PlayNotificationCatalog.listing.split(separator: "\n").map(String.init)
        #expect(names.count == PlayNotificationCatalog.subscriptionTypes.count + 4)
        for name in names {
            var request = PlayPushRequest(type: name, audience: "https://relay.acme.com/play")
            request.packageName = "com.acme.journal"
            let push = try factory.make(request)
            let data = try #require(push.body["message"]?["data"]?.stringValue)
            let notification = try JSONValue.parse(try #require(Base64.decode(data)))
            #expect(notification == push.notification)
            #expect(notification["version"]?.stringValue == "1.0")
            #expect(notification["packageName"]?.stringValue == "com.acme.journal")
            #expect(notification["eventTimeMillis"]?.stringValue.flatMap { Int64($0) } != nil)
            let members = Set(notification.objectValue?.keys ?? []).subtracting(["version", "packageName", "eventTimeMillis"])
            #expect(members.count == 1, "\(name): exactly one notification member, not \(members)")
            if let entry = PlayNotificationCatalog.subscriptionTypes.first(where: { $0.name == name }) {
                let inner = try #require(notification["subscriptionNotification"])
                #expect(inner["notificationType"]?.int64Value == entry.number)
                #expect(inner["purchaseToken"]?.stringValue?.contains(".AO-J1O") == true)
                #expect(inner["subscriptionId"]?.stringValue == PlayPushRequest.defaultSubscriptionId)
            } else if let entry = PlayNotificationCatalog.oneTimeProductTypes.first(where: { $0.name == name }) {
                let inner = try #require(notification["oneTimeProductNotification"])
                #expect(inner["notificationType"]?.int64Value == entry.number)
                #expect(inner["sku"]?.stringValue == PlayPushRequest.defaultProductId)
            } else if name == "VOIDED_PURCHASE" {
                let inner = try #require(notification["voidedPurchaseNotification"])
                #expect(inner["productType"]?.int64Value == 1 && inner["refundType"]?.int64Value == 1)
                #expect(inner["orderId"]?.stringValue?.hasPrefix("GPA.") == true)
            } else {
                #expect(name == "TEST" && notification["testNotification"]?["version"]?.stringValue == "1.0")
            }
        }
        var voided = PlayPushRequest(type: "VOIDED_PURCHASE", audience: "a")
        voided.voidedOneTimeProduct = true
        #expect(try factory.make(voided).notification["voidedPurchaseNotification"]?["productType"]?.int64Value == 2)
        #expect(throws: SimulatorError.self) { try factory.make(PlayPushRequest(type: "DID_RENEW", audience: "a")) }
    }

    @Test func theBodyIsAPubSubPushAndIdsDoNotRepeat() throws {
        let factory = PlayPushFactory(key: try Self.keys())
        let first = try factory.make(PlayPushRequest(type: "SUBSCRIPTION_RENEWED", audience: "a"))
        let second = try factory.make(PlayPushRequest(type: "SUBSCRIPTION_RENEWED", audience: "a"))
        let message = try #require(first.body["message"])
        #expect(message["attributes"] == .object(JSONObject()))
        #expect(message["messageId"]?.stringValue == first.messageId && first.messageId.count == 16)
        #expect(message["publishTime"]?.stringValue?.hasSuffix("Z") == true)
        #expect(first.body["subscription"]?.stringValue?.hasPrefix("projects/") == true)
        #expect(first.messageId != second.messageId)
        #expect(first.notification["subscriptionNotification"]?["purchaseToken"] != second.notification["subscriptionNotification"]?["purchaseToken"])
        let saved = first.savedRequest.components(separatedBy: "\n\n")
        #expect(saved.count == 2 && saved[1] == first.httpBody)
        #expect(saved[0].split(separator: "\n") == ["Authorization: \(first.authorization)", "Content-Type: application/json"])
        #expect(try JSONValue.parse(first.httpBody) == first.body)
    }

    @Test func theTokenVerifiesAgainstTheServedKeySetWithTheClaimsAGatewayChecks() throws {
        let keys = try Self.keys()
        let clock = ManualClock()
        var request = PlayPushRequest(type: "TEST", audience: "https://relay.acme.com/play")
        request.account = "pusher@acme-prod.iam.gserviceaccount.com"
        let push = try PlayPushFactory(key: keys, clock: clock).make(request)
        #expect(push.authorization.hasPrefix("Bearer "))
        let parts = push.authorization.dropFirst("Bearer ".count).split(separator: ".")
        #expect(parts.count == 3)
        let header = try Self.decode(parts[0])
        let claims = try Self.decode(parts[1])
        #expect(header["alg"]?.stringValue == "RS256" && header["kid"]?.stringValue == keys.kid)
        #expect(claims["iss"]?.stringValue == "https://accounts.google.com")
        #expect(claims["aud"]?.stringValue == "https://relay.acme.com/play")
        #expect(claims["email"]?.stringValue == "pusher@acme-prod.iam.gserviceaccount.com")
        #expect(claims["email_verified"] == true)
        #expect(claims["iat"]?.int64Value == clock.now().seconds)
        #expect(claims["exp"]?.int64Value == clock.now().seconds + 3600)
        let served = try String(contentsOfFile: keys.keySetPath, encoding: .utf8)
        let set = try JSONWebKeySet(json: Array(served.utf8))
        let key = try #require(set.keys[keys.kid])
        let signed = Array((parts[0] + "." + parts[1]).utf8)
        #expect(key.isValidRS256Signature(try #require(Base64.urlDecode(parts[2])), for: signed))
        #expect(!key.isValidRS256Signature(try #require(Base64.urlDecode(parts[2])), for: signed + [0x20]))
    }

    @Test func theDevKeyIsPrivateAndKeptAcrossRuns() throws {
        let data = try TestPaths.makeTemporaryDirectory("storerelay-dev-play").path
        let made = try PlayDevKey.loadOrCreate(dataDirectory: data)
        #expect(made.wasCreated)
        var info = stat()
        #expect(stat(made.directory, &info) == 0 && info.st_mode & 0o777 == 0o700)
        #expect(stat(made.directory + "/key.pem", &info) == 0 && info.st_mode & 0o777 == 0o600)
        let again = try PlayDevKey.loadOrCreate(dataDirectory: data)
        #expect(!again.wasCreated && again.kid == made.kid && again.keySet == made.keySet)
        #expect(try String(contentsOfFile: made.keySetPath, encoding: .utf8) == made.keySet + "\n")
        try "garbage".write(toFile: made.directory + "/key.pem", atomically: false, encoding: .utf8)
        #expect(throws: SimulatorError.self) { try PlayDevKey.loadOrCreate(dataDirectory: data) }
    }
}
