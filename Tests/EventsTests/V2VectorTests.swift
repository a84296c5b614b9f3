import Foundation
import StoreRelayVerification
import StoreRelayCore
import Testing

@Suite("Real Apple V2 notifications", .enabled(if: Vectors.available, Vectors.skipMessage))
struct V2VectorTests {
    static let files = (try? Vectors.files(in: "real/v2-notifications")) ?? []

    @Test func allTwentyThreeVectorsArePresent() {
        #expect(Self.files.count == 23)
    }

    @Test(arguments: files)
    func normalizesAsTheManifestSays(file: String) throws {
        let jws = String(decoding: try Vectors.bytes(file), as: UTF8.self)
        let entry = try #require(try Vectors.manifestEntry(file))
        let facts = try #require(entry["facts"])
        let content = try JWS.content(ofNotification: jws)
        let event = try NormalizedEvent(content: content, receivedAt: fixedReceipt)
        let json = try event.parsed()
        let object = try #require(json.objectValue)

        #expect(object.keys == NormalizedEvent.keys)
        #expect(event.id == facts["notificationUUID"]?.stringValue)
        #expect(json["id"]?.stringValue == facts["notificationUUID"]?.stringValue)
        #expect(json["source"] == "appstore")
        #expect(json["version"] == facts["version"])
        #expect(event.type == facts["notificationType"]?.stringValue)
        #expect(json["type"] == facts["notificationType"])
        #expect(json["subtype"] == facts["subtype"])
        #expect(event.subtype == facts["subtype"]?.stringValue)
        #expect(json["legacyType"] == .null)
        let environment = try #require(facts["data"]?["environment"]?.stringValue).lowercased()
        #expect(event.environment?.rawValue == environment)
        #expect(json["environment"]?.stringValue == environment)
        #expect(json["signedDate"] == (facts["signedDateISO"] ?? .null))
        #expect(json["receivedAt"] == .string(isoUTC(milliseconds: fixedReceipt.milliseconds)))

        let data = try #require(facts["data"])
        #expect(event.bundleId == data["bundleId"]?.stringValue)
        #expect(json["app"]?["bundleId"] == data["bundleId"])
        #expect(json["app"]?["appAppleId"] == (data["appAppleId"] ?? .null))
        #expect(json["app"]?["bundleVersion"] == (data["bundleVersion"] ?? .null))
        #expect(json["app"]?.objectValue?.keys == ["bundleId", "appAppleId", "bundleVersion"])
        #expect(json["subscription"]?.objectValue?.keys == ["originalTransactionId", "productId", "status"])
        #expect(json["subscription"]?["status"] == (data["status"] ?? .null))
        #expect(json["consumptionRequestReason"] == (data["consumptionRequestReason"] ?? .null))
        // Every member of a real notification has a key of its own: nothing lands in `extra`.
        for key in ["summary", "externalPurchaseToken", "appTransaction", "extra", "raw"] {
            #expect(json[key] == .null, "\(key)")
        }

        try checkNested(json["transaction"], decoded: content.transaction, facts: entry["nested"]?["signedTransactionInfo"]?["facts"],
                        dateKeys: ["purchaseDate", "originalPurchaseDate", "expiresDate", "signedDate", "revocationDate"])
        try checkNested(json["renewal"], decoded: content.renewal, facts: entry["nested"]?["signedRenewalInfo"]?["facts"],
                        dateKeys: ["signedDate", "recentSubscriptionStartDate", "renewalDate", "gracePeriodExpiresDate"])
        if let transaction = content.transaction ?? content.renewal {
            #expect(json["subscription"]?["originalTransactionId"] == transaction["originalTransactionId"])
            #expect(json["subscription"]?["productId"] == transaction["productId"])
        }

        // What the journal stores reads back as the same event.
        let stored = try NormalizedEvent(storedJSON: event.jsonBytes())
        #expect(stored == event)
    }

    /// Every decoded member is present, in Apple's order, with only the date members changed.
    private func checkNested(_ normalized: JSONValue?, decoded: JSONValue?, facts: JSONValue?, dateKeys: Set<String>) throws {
        guard let decoded = decoded?.objectValue else {
            #expect(normalized == .null)
            #expect(facts == nil)
            return
        }
        let object = try #require(normalized?.objectValue)
        #expect(object.keys == decoded.keys)
        for (key, value) in decoded {
            if dateKeys.contains(key), let ms = value.int64Value {
                #expect(object[key] == .string(isoUTC(milliseconds: ms)), "\(key)")
            } else {
                #expect(object[key] == value, "\(key)")
            }
        }
        for (key, fact) in try #require(facts?.objectValue) {
            if dateKeys.contains(key), let ms = fact.int64Value {
                #expect(object[key]?.stringValue == isoUTC(milliseconds: ms), "\(key)")
            } else {
                #expect(object[key] == fact, "\(key)")
            }
        }
    }
}
