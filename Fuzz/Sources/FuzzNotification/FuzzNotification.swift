import FuzzSupport
import StoreRelayCore

/// libFuzzer target for everything a notification body goes through before it is stored:
/// JSON parsing, V2 JWS decoding and verification, V1 parsing, and normalization.
///
/// The input is read three ways, chosen by its content so that real bodies and real compact
/// JWS files work as seeds unchanged:
/// - always: as JSON (`JSONRoundTrip`: re-serializing gives text that parses back to an equal
///   value) and as a compact JWS (`DecodedJWS`, then both verifiers);
/// - when it parses as JSON: as the POST body Apple sends (`NotificationBodyCheck`, the
///   gateway's own classification: `signedPayload` → V2, `notification_type` → V1);
/// - when it holds NUL bytes: as the parts of a JWS the fuzzer can mutate directly
///   (`StructuredJWS`): header, payload and nested signed data as plain JSON, base64url-
///   encoded here. Random base64 almost never decodes to JSON; this way the mutations land in
///   the JSON that the verifier and the normalizer actually read.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzNotification(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = fuzzInput(data, size)
    let value = JSONRoundTrip.check(input)
    NotificationBodyCheck.checkCompactJWS(String(decoding: input, as: UTF8.self))
    if value != nil {
        NotificationBodyCheck.checkBody(input)
    }
    if input.contains(0) {
        NotificationBodyCheck.checkBody(StructuredJWS(input).body)
    }
    return 0
}
