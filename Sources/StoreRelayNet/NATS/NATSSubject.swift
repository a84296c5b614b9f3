/// The rules a subject a message is published to must follow (NATS "Subject-Based
/// Messaging"): tokens separated by `.`, none empty, no wildcard (`*`, `>` are for
/// subscribers), and no white space or control character, which would end the protocol line.
public enum NATSSubject {
    /// Why `subject` cannot be published to, in a few words; nil when it can.
    public static func problem(_ subject: String) -> String? {
        if subject.isEmpty { return "it is empty" }
        if subject.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) { return "it holds white space or a control character" }
        let tokens = subject.split(separator: ".", omittingEmptySubsequences: false)
        if tokens.contains(where: \.isEmpty) { return "it has an empty token" }
        if tokens.contains(where: { $0 == "*" || $0 == ">" }) { return "it has a wildcard" }
        return nil
    }
}
