import StoreRelayVerification
import StoreRelayCore
import Testing

/// Normalization rules that need no vector files.
@Suite("Normalized event")
struct NormalizedEventTests {
    static let futurePayload: JSONValue = [
        "notificationType": "SOMETHING_NEW",
        "subtype": "BRAND_NEW_SUBTYPE",
        "notificationUUID": "0b6c8a1e-1111-4222-8333-944455556666",
        "data": [
            "environment": "Production", "appAppleId": 99, "bundleId": "com.acme.journal",
            "bundleVersion": "42", "status": 7, "futureDataMember": true,
        ],
        "version": "2.1",
        "signedDate": 1_763_633_730_123,
        "futureTopLevel": ["x": 1],
    ]

    @Test func unknownTypeSubtypeAndFieldsPassThrough() throws {
        let transaction: JSONValue = [
            "transactionId": "1", "purchaseDate": 1_763_633_730_000, "futureField": ["nested": [1, .number(JSONNumber(text: "2.50")!), "x"]],
            "futureDate": 1_763_633_730_000,
        ]
        let event = try NormalizedEvent(content: try content(Self.futurePayload, transaction: transaction),
                                        receivedAt: fixedReceipt)
        let json = try event.parsed()
        #expect(event.type == "SOMETHING_NEW" && event.subtype == "BRAND_NEW_SUBTYPE")
        #expect(json["type"] == "SOMETHING_NEW" && json["subtype"] == "BRAND_NEW_SUBTYPE")
        #expect(json["version"] == "2.1")
        #expect(json["environment"] == "production")
        #expect(json["signedDate"] == "2025-11-20T10:15:30.123Z")
        #expect(json["subscription"]?["status"] == 7)
        #expect(json["transaction"] == [
            "transactionId": "1", "purchaseDate": "2025-11-20T10:15:30.000Z",
            "futureField": ["nested": [1, .number(JSONNumber(text: "2.50")!), "x"]],
            "futureDate": 1_763_633_730_000,
        ])
        // Members Apple adds to the payload, `data` or `appData` travel in `extra`, as sent.
        #expect(json["extra"] == ["futureTopLevel": ["x": 1], "data": ["futureDataMember": true]])
        #expect(json.objectValue?.keys == NormalizedEvent.keys)
    }

    @Test func extraIsNullWhenEverythingHasAKeyAndHoldsUnknownAppDataMembers() throws {
        var payload = try #require(Self.futurePayload.objectValue)
        payload["futureTopLevel"] = nil
        var data = try #require(payload["data"]?.objectValue)
        data["futureDataMember"] = nil
        payload["data"] = .object(data)
        #expect(try NormalizedEvent(content: try content(.object(payload)), receivedAt: fixedReceipt).parsed()["extra"] == .null)

        payload["data"] = nil
        payload["appData"] = ["appAppleId": 99, "bundleId": "com.acme.journal", "environment": "Production", "newMember": "y"]
        let json = try NormalizedEvent(content: try content(.object(payload)), receivedAt: fixedReceipt).parsed()
        #expect(json["extra"] == ["appData": ["newMember": "y"]])
        #expect(json["app"]?["bundleId"] == "com.acme.journal")
    }

    @Test func missingVersionMeansTwoPointZeroAndMissingSubtypeIsNull() throws {
        var payload = try #require(Self.futurePayload.objectValue)
        payload["version"] = nil
        payload["subtype"] = nil
        payload["signedDate"] = nil
        let json = try NormalizedEvent(content: try content(.object(payload)), receivedAt: fixedReceipt).parsed()
        #expect(json["version"] == "2.0")
        #expect(json["subtype"] == .null)
        #expect(json["signedDate"] == .null)
        #expect(json.objectValue?.keys == NormalizedEvent.keys)
    }

    @Test func fractionalAndOddDates() throws {
        var payload = try #require(Self.futurePayload.objectValue)
        payload["signedDate"] = .number(JSONNumber(text: "1763633730123.9999")!)
        let renewal: JSONValue = [
            "signedDate": .number(JSONNumber(text: "1.7636337301239e12")!),
            "renewalDate": "not a number",
            "gracePeriodExpiresDate": .number(JSONNumber(text: "1e300")!),
            "recentSubscriptionStartDate": nil,
        ]
        let json = try NormalizedEvent(content: try content(.object(payload), renewal: renewal),
                                       receivedAt: fixedReceipt).parsed()
        #expect(json["signedDate"] == "2025-11-20T10:15:30.123Z")
        #expect(json["renewal"]?["signedDate"] == "2025-11-20T10:15:30.123Z")
        #expect(json["renewal"]?["renewalDate"] == "not a number")
        #expect(json["renewal"]?["gracePeriodExpiresDate"] == renewal["gracePeriodExpiresDate"])
        #expect(json["renewal"]?["recentSubscriptionStartDate"] == .null)

        // Below the epoch a fraction still floors: -1.5 ms is 1969-12-31T23:59:59.998Z.
        let transaction: JSONValue = ["purchaseDate": .number(JSONNumber(text: "-1.5")!), "expiresDate": -1]
        let before = try NormalizedEvent(content: try content(.object(payload), transaction: transaction),
                                         receivedAt: fixedReceipt).parsed()
        #expect(before["transaction"]?["purchaseDate"] == "1969-12-31T23:59:59.998Z")
        #expect(before["transaction"]?["expiresDate"] == "1969-12-31T23:59:59.999Z")
    }

    /// `verified` is true unless the content says it was accepted unchecked, and survives
    /// storage; an event stored without it (an older StoreRelay) reads as unknown.
    @Test func verifiedSaysWhetherTheGatewayCheckedTheNotification() throws {
        var unchecked = try content(Self.futurePayload)
        unchecked.verified = false
        for (content, expected) in [(try content(Self.futurePayload), true), (unchecked, false)] {
            let event = try NormalizedEvent(content: content, receivedAt: fixedReceipt)
            #expect(event.verified == expected)
            #expect(try event.parsed()["verified"] == .bool(expected))
            #expect(try NormalizedEvent(storedJSON: event.jsonBytes()).verified == expected)
        }
        var older = try NormalizedEvent(content: content(Self.futurePayload), receivedAt: fixedReceipt).json
        older["verified"] = nil
        #expect(try NormalizedEvent(storedObject: older).verified == nil)
    }

    /// Nested dates Apple documents are converted too (issue 18, point 4): commitmentInfo's,
    /// Advanced Commerce items' revocations and refunds, the external purchase token's
    /// expiry. Members beside them that are not dates stay as they are.
    @Test func nestedDatesAreConvertedAndTheirNeighboursKept() throws {
        let ms: JSONValue = 1_763_633_730_123
        let iso: JSONValue = "2025-11-20T10:15:30.123Z"
        let transaction: JSONValue = [
            "transactionId": "1", "purchaseDate": ms,
            "commitmentInfo": ["commitmentExpiresDate": ms, "commitmentRenewalDate": ms, "remainingPeriods": 3],
            "advancedCommerceInfo": [
                "requestReferenceId": "r-1",
                "items": [["sku": "a", "revocationDate": ms, "refunds": [["refundDate": ms, "refundAmount": 500]]],
                          ["sku": "b", "price": 1_763_633_730_123]],
            ],
        ]
        let renewal: JSONValue = ["renewalDate": ms, "commitmentInfo": ["commitmentEndDate": ms]]
        var payload = Self.futurePayload
        payload = .object(JSONObject(payload.objectValue!.members.filter { $0.key != "data" }
            + [("externalPurchaseToken", ["externalPurchaseId": "e-1", "tokenCreationDate": ms, "tokenExpirationDate": ms,
                                          "appAppleId": 99, "bundleId": "com.acme.journal", "environment": "Production"])]))
        let json = try NormalizedEvent(content: try content(payload, transaction: transaction, renewal: renewal),
                                       receivedAt: fixedReceipt).parsed()
        #expect(json["transaction"]?["purchaseDate"] == iso)
        #expect(json["transaction"]?["commitmentInfo"] == ["commitmentExpiresDate": iso, "commitmentRenewalDate": iso, "remainingPeriods": 3])
        let items = json["transaction"]?["advancedCommerceInfo"]?["items"]?.arrayValue ?? []
        #expect(items.first?["revocationDate"] == iso)
        #expect(items.first?["refunds"]?.arrayValue?.first == ["refundDate": iso, "refundAmount": 500])
        #expect(items.last?["price"] == 1_763_633_730_123, "a number that is no documented date stays a number")
        #expect(json["renewal"]?["commitmentInfo"]?["commitmentEndDate"] == iso)
        #expect(json["externalPurchaseToken"]?["tokenExpirationDate"] == iso)
        #expect(json["externalPurchaseToken"]?["tokenCreationDate"] == iso)
    }

    @Test func missingIdentityIsRejected() throws {
        for key in ["notificationUUID", "notificationType"] {
            var payload = try #require(Self.futurePayload.objectValue)
            payload[key] = 12
            let input = try content(.object(payload))
            let error = #expect(throws: EventError.self) {
                try NormalizedEvent(content: input, receivedAt: fixedReceipt)
            }
            #expect(error?.code == .missingField)
            #expect(error?.reason.contains(key) == true)
        }
    }

    @Test func rawIsNullUnlessAskedForAndThenIsTheBodyText() throws {
        let body = Array(#"{"signedPayload":"eyJhbGciOiJFUzI1NiJ9.e30.c2ln"}"#.utf8)
        let event = try NormalizedEvent(content: try content(Self.futurePayload), receivedAt: fixedReceipt)
        #expect(try event.parsed()["raw"] == .null)
        let withRaw = try JSONValue.parse(event.jsonBytes(includingRaw: body))
        #expect(withRaw["raw"] == .string(String(decoding: body, as: UTF8.self)))
        #expect(withRaw.objectValue?.keys == NormalizedEvent.keys)
        var stripped = try #require(withRaw.objectValue)
        stripped["raw"] = .null
        #expect(stripped == event.json)
        // The stored form never keeps a raw body, even if one was written by mistake.
        let restored = try NormalizedEvent(storedJSON: event.jsonBytes(includingRaw: body))
        #expect(restored == event)
    }

    @Test func storedEventsMustCarryTheirRoutingFields() throws {
        #expect(throws: EventError.self) { try NormalizedEvent(storedJSON: Array("[1]".utf8)) }
        #expect(throws: EventError.self) { try NormalizedEvent(storedJSON: Array("{".utf8)) }
        #expect(throws: EventError.self) {
            try NormalizedEvent(storedJSON: Array(#"{"id":"a","type":"T","environment":"moon"}"#.utf8))
        }
        let minimal = try NormalizedEvent(storedJSON: Array(#"{"id":"a","type":"T","environment":"sandbox"}"#.utf8))
        #expect(minimal.id == "a" && minimal.environment == .sandbox && minimal.bundleId == nil)
    }

    @Test func environmentOfPayload() throws {
        func env(_ payload: JSONValue) -> AppStoreEnvironment? { AppStoreEnvironment.environment(ofPayload: payload) }
        #expect(env(["data": ["environment": "Sandbox"]]) == .sandbox)
        #expect(env(["data": ["environment": "Production"]]) == .production)
        #expect(env(["data": ["environment": "Xcode"]]) == .xcode)
        #expect(env(["summary": ["environment": "LocalTesting"]]) == .localtesting)
        #expect(env(["externalPurchaseToken": ["externalPurchaseId": "SANDBOX_1"]]) == .sandbox)
        #expect(env(["externalPurchaseToken": ["externalPurchaseId": "1-SANDBOX"]]) == .production)
        #expect(env(["appData": ["environment": "Sandbox"]]) == .sandbox)
        #expect(env(["data": ["environment": "Moon"]]) == nil)
        #expect(env(["data": ["bundleId": "x"], "appData": ["environment": "Sandbox"]]) == nil)
        #expect(env(["notificationType": "TEST"]) == nil)
        #expect(env("not an object") == nil)
        let value: JSONValue = ["data": ["environment": "Production"]]
        let object = try #require(value.objectValue)
        #expect(NotificationContent(payload: object)?.environment == .production)
        #expect(NotificationContent(payload: JSONObject()) == nil)
    }
}
