import StoreRelayVerification
import StoreRelayCore
import Testing

/// Inputs found while fuzzing notification bodies (Fuzz/, target FuzzNotification), kept so
/// the bugs they exposed stay fixed.
@Suite("Events fuzz regressions")
struct EventsFuzzRegressionTests {
    /// A V1 body whose `password` member name is spelled with a JSON escape. The body never
    /// contains the letters "password", so `raw` used to be the body byte for byte, secret
    /// included, although the parsed member is `password` all the same.
    @Test func escapedPasswordMemberNeverReachesRaw() throws {
        let secret = "s3cret-shared"
        let body = Array(#"{"notification_type":"DID_RENEW","pass\u0077ord":"s3cret-shared","environment":"Sandbox","nested":{"\u0070assword":"s3cret-shared"}}"#.utf8)
        let notification = try V1Notification.parse(body)
        #expect(notification.password == secret)
        let event = notification.normalized(receivedAt: Timestamp(milliseconds: 0))

        let text = String(decoding: event.jsonBytes(includingRaw: body), as: UTF8.self)
        #expect(!text.contains(secret))
        let raw = try #require(try JSONValue.parse(Array(text.utf8))["raw"]?.stringValue)
        let rawBody = try JSONValue.parse(raw)
        #expect(rawBody["password"] == nil)
        #expect(rawBody["nested"]?["password"] == nil)
        #expect(rawBody["notification_type"] == "DID_RENEW")
        // Unmapped members travel in `extra`, never with a password inside.
        #expect(try JSONValue.parse(Array(text.utf8))["extra"] == ["nested": [:]])
    }

    /// The escape check must not cost a body without any password its byte-for-byte `raw`.
    @Test func escapedBodyWithoutPasswordStaysByteForByte() throws {
        let body = Array(#"{"notification_type":"DID_RENEW","environment":"Sandbox","url":"https:\/\/x","n":1.50}"#.utf8)
        let event = try V1Notification.parse(body).normalized(receivedAt: Timestamp(milliseconds: 0))
        let withRaw = try JSONValue.parse(event.jsonBytes(includingRaw: body))
        #expect(withRaw["raw"]?.stringValue == String(decoding: body, as: UTF8.self))
    }
}
