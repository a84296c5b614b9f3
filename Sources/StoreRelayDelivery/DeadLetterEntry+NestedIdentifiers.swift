import StoreRelayVerification
import StoreRelayCore

extension DeadLetterEntry {
    /// The transaction ids inside the signed transaction and renewal info of a V2 body, read
    /// without verifying them.
    ///
    /// For the search index of a notification this build could not read: when its nested
    /// data failed (a bad signature, another app or environment), its event holds only the
    /// outer payload, yet the operator looking for it has the transaction id in hand. The
    /// nested JWS strings are covered by Apple's outer signature, which did verify; their
    /// contents are only matched against what an operator types, never delivered or trusted.
    static func nestedIdentifiers(_ body: [UInt8]) -> (originalTransactionId: String?, transactionId: String?) {
        guard let signedPayload = (try? JSONValue.parse(body))?["signedPayload"]?.stringValue,
              let outer = try? DecodedJWS(compact: signedPayload),
              let data = outer.payload["data"]?.objectValue
        else { return (nil, nil) }
        func decoded(_ field: String) -> JSONObject? {
            data[field]?.stringValue.flatMap { try? DecodedJWS(compact: $0).payload }
        }
        let transaction = decoded("signedTransactionInfo")
        let renewal = decoded("signedRenewalInfo")
        return (transaction?["originalTransactionId"]?.stringValue ?? renewal?["originalTransactionId"]?.stringValue,
                transaction?["transactionId"]?.stringValue)
    }
}
