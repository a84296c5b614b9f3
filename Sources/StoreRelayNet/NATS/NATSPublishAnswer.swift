import StoreRelayCore

/// What the stream said of one publish.
public enum NATSPublishAnswer: Sendable, Equatable {
    /// A PubAck: the message is stored as `sequence` in `stream` (`duplicate`: it already was,
    /// under the same `Nats-Msg-Id`, within the stream's duplicate window).
    case acknowledged(stream: String, sequence: UInt64, duplicate: Bool)
    /// The server answered and did not store it: an error PubAck, no stream listening on the
    /// subject (status 503, "no responders"), a message larger than the server takes, or a
    /// permissions violation. The sentence says which, for the dead letter.
    case refused(String)
}

extension NATSPublishAnswer {
    /// What the message on a publish's reply subject says (JetStream "Publishing to Streams"):
    /// a PubAck `{"stream":..,"seq":..}` is stored; `{"error":{...}}`, a 503 status (no
    /// stream listens on the subject) or any other answer is a refusal.
    init(reply message: NATSInboundMessage, subject: String) {
        self = Self.interpret(message, subject: subject)
    }

    private static func interpret(_ message: NATSInboundMessage, subject: String) -> NATSPublishAnswer {
        if let status = message.status {
            if status == 503 { return .refused("no JetStream stream takes subject '\(subject)' (NATS 503 no responders)") }
            let description = message.statusDescription
            return .refused("NATS answered status \(status)" + (description.isEmpty ? "" : " \(description)"))
        }
        guard let json = try? JSONValue.parse(message.payload) else {
            return .refused("the answer on '\(subject)' is not a JetStream PubAck: \(snippet(message.payload))")
        }
        if let error = json["error"] {
            let code = error["code"]?.int64Value.map { "\($0)" } ?? "?"
            let errCode = error["err_code"]?.int64Value.map { " (err_code \($0))" } ?? ""
            let description = error["description"]?.stringValue ?? snippet(message.payload)
            return .refused("JetStream refused the message: \(description), code \(code)\(errCode)")
        }
        guard let stream = json["stream"]?.stringValue, let sequence = json["seq"]?.int64Value, sequence >= 0 else {
            return .refused("the answer on '\(subject)' is not a JetStream PubAck: \(snippet(message.payload))")
        }
        return .acknowledged(stream: stream, sequence: UInt64(sequence), duplicate: json["duplicate"]?.boolValue ?? false)
    }

    private static func snippet(_ bytes: [UInt8]) -> String {
        String(decoding: bytes.prefix(200), as: UTF8.self).unicodeScalars
            .map { $0.value < 0x20 || $0.value == 0x7F ? " " : String($0) }.joined()
    }
}
