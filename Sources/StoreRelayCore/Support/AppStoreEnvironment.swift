/// The App Store environment a notification belongs to, lowercase as StoreRelay writes it
/// everywhere (events, routes.conf, metrics labels).
public enum AppStoreEnvironment: String, Sendable, Hashable, CaseIterable, Comparable {
    case production, sandbox, xcode, localtesting

    /// Parses both StoreRelay's lowercase names and Apple's spellings: `Production`,
    /// `Sandbox`, `Xcode`, `LocalTesting` (V2) and `PROD` (V1 `environment`).
    public init?(appleName: String) {
        switch appleName.lowercased() {
        case "production", "prod": self = .production
        case "sandbox": self = .sandbox
        case "xcode": self = .xcode
        case "localtesting": self = .localtesting
        default: return nil
        }
    }

    public static func < (lhs: Self, rhs: Self) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}
