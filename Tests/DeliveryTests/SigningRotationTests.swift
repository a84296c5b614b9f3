import Foundation
import Testing
@testable import StoreRelayDelivery
import StoreRelayConfig
import StoreRelayNet
import StoreRelayCore
import StoreRelayTestSupport

/// `signing-secret NEW OLD` (SPEC "Delivery controls"): a request signed during a rotation is
/// checked by PyPI's `standardwebhooks`, the reference receiver, holding the new secret, the
/// old one, or neither. An independent implementation, so a signature both sides get wrong
/// the same way cannot pass.
@Suite struct SigningRotationTests {
    static let verifierAvailable: Bool =
        (try? CommandRunner.run("python3", ["-c", "import standardwebhooks"]).status) == 0

    static let newSecret = "whsec_" + Base64.encode(Array("the-new-signing-key-of-32-bytes!".utf8))
    static let oldSecret = "whsec_" + Base64.encode(Array("the-old-signing-key-of-32-bytes!".utf8))
    static let otherSecret = "whsec_" + Base64.encode(Array("a-key-no-one-configured-32bytes!".utf8))

    /// Reads `{"headers":{..},"body":"<base64>","secrets":[..]}` and prints, per secret,
    /// whether `Webhook(secret).verify` accepts the request.
    static let script = """
        import base64, json, sys
        from standardwebhooks.webhooks import Webhook, WebhookVerificationError
        request = json.load(sys.stdin)
        body = base64.b64decode(request["body"])
        results = []
        for secret in request["secrets"]:
            try:
                Webhook(secret).verify(body, request["headers"])
                results.append("verified")
            except WebhookVerificationError as error:
                results.append("refused: " + str(error))
        print(json.dumps(results))
        """

    /// The request a webhook with `secrets` sends for a sample event, signed now.
    private func request(secrets: [String]) throws -> HTTPClientRequest {
        var options = WebhookOptions(url: try HTTPURL("http://127.0.0.1:1/hook"))
        options.signingSecrets = secrets.map(ConfigSecret.init)
        let maker = WebhookRequest(options: options)
        let notification = try sampleNotification()
        return maker.request(for: notification, body: maker.body(for: notification), attempt: 1, now: Timestamp.now())
    }

    /// What the reference receiver says of `request` for each of `secrets`.
    private func verdicts(_ request: HTTPClientRequest, secrets: [String]) throws -> [String] {
        let headers = JSONObject(request.headers.map { (key: $0.name, value: JSONValue.string($0.value)) })
        let input = JSONValue.object(JSONObject([
            (key: "headers", value: .object(headers)), (key: "body", value: .string(Base64.encode(request.body))),
            (key: "secrets", value: .array(secrets.map { .string($0) })),
        ]))
        let result = try CommandRunner.run("python3", ["-c", Self.script], stdin: input.serializedBytes())
        #expect(result.status == 0, "\(result.stderr)")
        return try #require(JSONValue.parse(Array(result.stdout.utf8)).arrayValue).compactMap(\.stringValue)
    }

    @Test(.enabled(if: verifierAvailable, "python3 with standardwebhooks is not installed (pip install standardwebhooks)"))
    func aReceiverHoldingEitherSecretVerifiesARotatingRequest() throws {
        let signed = try request(secrets: [Self.newSecret, Self.oldSecret])
        let signatures = try #require(signed.headers["webhook-signature"]).split(separator: " ")
        #expect(signatures.count == 2 && signatures.allSatisfy { $0.hasPrefix("v1,") })
        let results = try verdicts(signed, secrets: [Self.newSecret, Self.oldSecret, Self.otherSecret])
        #expect(results.count == 3)
        #expect(results.first == "verified", "new secret: \(results)")
        #expect(results.dropFirst().first == "verified", "old secret: \(results)")
        #expect(results.last?.hasPrefix("refused") == true, "a third secret: \(results)")
    }

    @Test(.enabled(if: verifierAvailable, "python3 with standardwebhooks is not installed (pip install standardwebhooks)"))
    func oneSecretSignsOnceAndOnlyItVerifies() throws {
        let signed = try request(secrets: [Self.newSecret])
        #expect(signed.headers["webhook-signature"]?.contains(" ") == false)
        #expect(try verdicts(signed, secrets: [Self.newSecret, Self.oldSecret]).map { $0.hasPrefix("verified") } == [true, false])
    }

    /// The new secret's signature comes first, so a receiver that checks only the first finds
    /// the new one once it has rotated; both are fixed values for fixed input.
    @Test func signaturesAreNewestFirstAndDeterministic() throws {
        let keys = [Array("the-new-signing-key-of-32-bytes!".utf8), Array("the-old-signing-key-of-32-bytes!".utf8)]
        let body = Array(#"{"id":"e1"}"#.utf8)
        let both = WebhookRequest.signatures(id: "e1", timestamp: "1700000000", body: body, keys: keys)
        let first = WebhookRequest.signature(id: "e1", timestamp: "1700000000", body: body, key: keys[0])
        let second = WebhookRequest.signature(id: "e1", timestamp: "1700000000", body: body, key: keys[1])
        #expect(both == first + " " + second)
        #expect(first != second)
    }

    @Test func noSecretSendsNoSignature() throws {
        #expect(try request(secrets: []).headers["webhook-signature"] == nil)
    }
}
