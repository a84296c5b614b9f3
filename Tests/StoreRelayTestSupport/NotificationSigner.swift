import Foundation
import StoreRelayVerification
import StoreRelayCrypto
import StoreRelayCore

/// Signs many distinct V2 notifications quickly with a `TestCertificateAuthority` chain,
/// for load and chaos tests. It uses StoreRelay's own ES256 signer for speed; verification
/// tests use the CA's `openssl`-signed JWS instead, so they never trust our signer.
public struct NotificationSigner: Sendable {
    public let authority: TestCertificateAuthority
    private let key: P256PrivateKey
    private let header: String

    public init(authority: TestCertificateAuthority) throws {
        self.authority = authority
        let chain = authority.chain(.valid)
        key = try P256PrivateKey(pemString: String(contentsOfFile: chain.leafKeyPath, encoding: .utf8))
        header = Base64.urlEncode(Array(("{\"alg\":\"ES256\",\"x5c\":[" + chain.x5c.map { "\"\($0)\"" }.joined(separator: ",") + "]}").utf8))
    }

    public func sign(payload: String) throws -> String {
        let input = header + "." + Base64.urlEncode(Array(payload.utf8))
        return input + "." + Base64.urlEncode(try key.signES256(Array(input.utf8)))
    }

    /// Apple's HTTP body for a notification of `type`/`subtype` in `environment`, with a
    /// nested signed transaction, for `bundleId`.
    public func body(
        uuid: String = UUID().uuidString.lowercased(), type: String = "DID_RENEW", subtype: String? = nil,
        environment: String = "Sandbox", bundleId: String = "com.acme.journal", productId: String = "com.acme.journal.monthly",
        originalTransactionId: String = "2000000000000001"
    ) throws -> String {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let transaction = try sign(payload: """
            {"transactionId":"2000000\(now)","originalTransactionId":"\(originalTransactionId)","bundleId":"\(bundleId)",\
            "productId":"\(jsonEscaped(productId))","purchaseDate":\(now - 1000),"expiresDate":\(now + 2_592_000_000),\
            "type":"Auto-Renewable Subscription","environment":"\(environment)","signedDate":\(now)}
            """)
        let subtypeField = subtype.map { "\"subtype\":\"\($0)\"," } ?? ""
        let jws = try sign(payload: """
            {"notificationType":"\(type)",\(subtypeField)"notificationUUID":"\(uuid)","version":"2.0",\
            "signedDate":\(now),"data":{"appAppleId":1234567890,"bundleId":"\(bundleId)","bundleVersion":"42",\
            "environment":"\(environment)","signedTransactionInfo":"\(transaction)","status":1}}
            """)
        return "{\"signedPayload\":\"\(jws)\"}"
    }

    private func jsonEscaped(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
    }
}
