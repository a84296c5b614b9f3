import StoreRelayConfig
import StoreRelayCore

/// `storerelay verify`: the gateway's verification and normalization without a server.
public enum OfflineVerification {
    public struct Verdict: Sendable {
        /// The normalized event as JSON text.
        public var eventJSON: String
        /// Why the gateway would quarantine it, if it would.
        public var quarantineReason: String?
    }

    /// Why a body is not a valid notification: `code` is `malformed` or `signature`, as the
    /// public listener would answer.
    public struct Rejection: Error, CustomStringConvertible {
        public let code: String
        public let message: String
        public var description: String { "\(code): \(message)" }
    }

    /// Verifies `body` as the public listener would, but with every nested JWS verified on
    /// its own (as `verify-nested yes`). A bare JWS is accepted too, for
    /// convenience: it is wrapped as Apple's `{"signedPayload":...}` body.
    public static func verify(
        body: [UInt8], configuration: GatewayConfiguration, clock: any TimeSource = WallClock()
    ) throws -> Verdict {
        var body = body
        var trimmed = body[...]
        while let last = trimmed.last, last == 0x0A || last == 0x0D || last == 0x20 { trimmed.removeLast() }
        if trimmed.starts(with: Array("eyJ".utf8)) {
            let jws = String(decoding: trimmed, as: UTF8.self)
            body = JSONValue.object(JSONObject([(key: "signedPayload", value: .string(jws))])).serializedBytes()
        }
        let processor = NotificationProcessor(
            // Offline, every nested JWS is verified on its own whatever `verify-nested` says:
            // one body costs nothing, and this is where a doubt about one is settled.
            verifier: try Gateway.makeVerifier(configuration, clock: clock, nested: .full),
            policy: AcceptancePolicy(configuration), routes: configuration.routes)
        do {
            let processed = try processor.process(body: body, pathEnvironment: nil, receivedAt: clock.now())
            var reason: String?
            if case .quarantine(let why) = processed.disposition { reason = why }
            return Verdict(eventJSON: String(decoding: processed.event.jsonBytes(), as: UTF8.self), quarantineReason: reason)
        } catch {
            let code = switch error {
            case .malformed: "malformed"
            case .signature: "signature"
            case .unavailable: "unavailable"
            }
            throw Rejection(code: code, message: error.message)
        }
    }
}
