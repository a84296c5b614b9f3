import StoreRelayCore

/// What a valid configuration may still have wrong: a route naming a notification type or
/// subtype Apple does not send (a typo, or the changelog's "MIGRATE" for `MIGRATION`) never
/// matches, silently. `storerelay check` prints these, `serve` logs them at start and reload.
extension GatewayConfiguration {
    public var warnings: [String] {
        var warnings: [String] = []
        for rule in routes.rules {
            for pattern in rule.types ?? [] {
                let place = "\(sourceFile):\(rule.line)"
                guard let subtypes = NotificationCatalog.subtypes(of: pattern.type) else {
                    let hint = Self.closestType(to: pattern.type).map { " (did you mean \($0)?)" } ?? ""
                    warnings.append("\(place): route type \(pattern.type) is not a notification type Apple documents\(hint); "
                        + "it matches only if Apple adds it")
                    continue
                }
                guard let subtype = pattern.subtype else { continue }
                if subtype == RouteRule.TypePattern.noSubtype {
                    if !subtypes.contains(nil) {
                        warnings.append("\(place): \(pattern.type) always has a subtype, so \(pattern) never matches")
                    }
                } else if !subtypes.contains(subtype) {
                    let valid = subtypes.map { $0 ?? RouteRule.TypePattern.noSubtype }.joined(separator: ", ")
                    warnings.append("\(place): \(pattern.type) has no subtype \(subtype) (Apple sends: \(valid)); \(pattern) never matches")
                }
            }
        }
        return warnings
    }

    /// The documented type that shares the longest prefix with `type` (at least 4 letters).
    private static func closestType(to type: String) -> String? {
        let scored = NotificationCatalog.all.map { entry in
            (entry.type, zip(entry.type, type).prefix { $0 == $1 }.count)
        }
        guard let best = scored.max(by: { $0.1 < $1.1 }), best.1 >= 4 else { return nil }
        return best.0
    }
}
