import StoreRelayCore

/// What the simulator adds to the catalog: checking a requested type and subtype, and the
/// listing `storerelay simulate --list` prints.
extension NotificationCatalog {
    /// Checks that Apple sends `type` with `subtype` (nil: without one). The error lists
    /// what is valid, so a usage mistake is fixed in one go.
    public static func validate(type: String, subtype: String?) throws(SimulatorError) {
        guard let subtypes = subtypes(of: type) else {
            throw SimulatorError(.unknownType,
                                 "unknown notification type '\(type)'; valid types: \(all.map(\.type).joined(separator: ", "))")
        }
        guard !subtypes.contains(subtype) else { return }
        let named = subtypes.compactMap { $0 }
        let choices = named.joined(separator: ", ") + (subtypes.contains(nil) ? " (or no --subtype)" : "")
        if named.isEmpty {
            throw SimulatorError(.unknownSubtype, "\(type) has no subtype; remove --subtype \(subtype ?? "")")
        }
        if let subtype {
            throw SimulatorError(.unknownSubtype, "\(type) has no subtype '\(subtype)'; valid subtypes: \(choices)")
        }
        throw SimulatorError(.unknownSubtype, "\(type) needs --subtype: \(choices)")
    }

    /// One line per type, for `storerelay simulate --list`.
    public static var listing: String {
        all.map { entry in
            let names = entry.subtypes.map { $0 ?? "(none)" }.joined(separator: " ")
            return entry.type + String(repeating: " ", count: max(1, 28 - entry.type.count)) + names
        }.joined(separator: "\n")
    }
}
