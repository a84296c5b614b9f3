/// A declared Google Play app (`play PACKAGE { ... }`): whose Pub/Sub pushes the gateway
/// accepts, and how it recognises them (SPEC "Google Play real-time developer notifications").
///
/// A push is Google's only when its token's audience is `pushAudience` and its service account
/// is `pushAccount` — the two settings of the push subscription's authentication. Once any
/// `play` block is declared, pushes for other packages are quarantined.
public struct PlayAppConfiguration: Sendable, Hashable {
    /// The Android package name, e.g. `com.acme.journal`.
    public var packageName: String
    /// `push-audience URL`: the push subscription's audience (the token's `aud`).
    public var pushAudience: String
    /// `push-account EMAIL`: the push subscription's service account (the token's `email`).
    public var pushAccount: String
    /// `service-account FILE`: the service-account JSON key for the Developer API
    /// (enrichment); nil: events are delivered without it.
    public var serviceAccountFile: String?

    public init(packageName: String, pushAudience: String, pushAccount: String, serviceAccountFile: String? = nil) {
        self.packageName = packageName
        self.pushAudience = pushAudience
        self.pushAccount = pushAccount
        self.serviceAccountFile = serviceAccountFile
    }
}

extension GatewayConfiguration {
    /// Where Google publishes the keys that sign Pub/Sub push tokens.
    public static let defaultGoogleCertsURL = "https://www.googleapis.com/oauth2/v3/certs"

    /// The declared Google Play app with this package name, if any.
    public func playApp(packageName: String) -> PlayAppConfiguration? {
        playApps.first { $0.packageName == packageName }
    }

    /// Whether any path takes Google Play pushes (`path PATH play`).
    public var hasPlayPath: Bool { paths.contains { $0.kind == .googlePlay } }
}
