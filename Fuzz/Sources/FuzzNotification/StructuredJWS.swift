import FuzzSupport
import StoreRelayCore

/// A notification body built from fuzzer-chosen plain parts, split at NUL bytes:
/// `header NUL payload [NUL transaction [NUL renewal [NUL appTransaction [NUL signature]]]]`.
///
/// Header and payloads are base64url-encoded into compact JWS exactly as given (valid JSON or
/// not). When the payload is a JSON object, each nested part that is present is signed-shaped
/// with the same header and put where Apple puts it: `data.signedTransactionInfo`,
/// `data.signedRenewalInfo`, and `signedAppTransactionInfo` in `appData` (else `data`). The
/// signature is the sixth part, or 64 bytes of the input's hash: ES256 length, never valid.
struct StructuredJWS {
    let body: [UInt8]

    init(_ input: [UInt8]) {
        let parts = input.split(separator: 0, maxSplits: 5, omittingEmptySubsequences: false).map(Array.init)
        let header = parts[0]
        let payload = parts.count > 1 ? parts[1] : []
        var signature: [UInt8]
        if parts.count > 5 {
            signature = parts[5]
        } else {
            var random = SplitMix64(hashing: input)
            signature = (0..<8).flatMap { _ in withUnsafeBytes(of: random.next()) { Array($0) } }
        }
        func jws(_ payload: [UInt8]) -> String {
            Base64URL.encode(header) + "." + Base64URL.encode(payload) + "." + Base64URL.encode(signature)
        }

        var outerPayload = payload
        if parts.count > 2, case .object(var object)? = try? JSONValue.parse(payload) {
            var data = object["data"]?.objectValue
            if !parts[2].isEmpty { data?["signedTransactionInfo"] = .string(jws(parts[2])) }
            if parts.count > 3, !parts[3].isEmpty { data?["signedRenewalInfo"] = .string(jws(parts[3])) }
            var appData = object["appData"]?.objectValue
            if parts.count > 4, !parts[4].isEmpty {
                if appData != nil {
                    appData?["signedAppTransactionInfo"] = .string(jws(parts[4]))
                } else {
                    data?["signedAppTransactionInfo"] = .string(jws(parts[4]))
                }
            }
            if let data { object["data"] = .object(data) }
            if let appData { object["appData"] = .object(appData) }
            outerPayload = JSONValue.object(object).serializedBytes()
        }
        body = JSONValue.object(JSONObject([(key: "signedPayload", value: .string(jws(outerPayload)))])).serializedBytes()
    }
}
