import StoreRelayCrypto

/// V1 notifications are unsigned; Apple proves them by echoing the app's shared secret in the
/// `password` field.
public enum V1SharedSecret {
    /// Whether `password` equals one of `secrets`. Every secret is compared, in constant time,
    /// so neither the matching secret's position nor a common prefix shows in the timing.
    /// An empty password or secret never matches.
    public static func matches(password: String, secrets: [String]) -> Bool {
        let candidate = Array(password.utf8)
        var matched = false
        for secret in secrets where !secret.isEmpty {
            // No short-circuit: `|=` after each comparison keeps the work independent of where a match is.
            let equal = ConstantTime.equals(candidate, Array(secret.utf8))
            matched = matched || equal
        }
        return matched && !candidate.isEmpty
    }
}
