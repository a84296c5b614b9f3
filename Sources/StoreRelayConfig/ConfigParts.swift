import StoreRelaySupport

/// A POST path of the public listener, optionally bound to one environment.
public struct NotificationPath: Sendable, Hashable {
    /// The path, starting with `/`.
    public var path: String
    /// When set, notifications on this path must be of this environment or are quarantined;
    /// nil accepts every accepted environment.
    public var environment: AppStoreEnvironment?

    public init(path: String, environment: AppStoreEnvironment? = nil) {
        self.path = path
        self.environment = environment
    }
}

/// Certificate chain and private key files for terminating TLS on the public listener.
public struct TLSFiles: Sendable, Hashable {
    /// PEM certificate chain file, as written (relative paths are relative to the working directory).
    public var certificateFile: String
    /// PEM private key file, as written.
    public var privateKeyFile: String

    public init(certificateFile: String, privateKeyFile: String) {
        self.certificateFile = certificateFile
        self.privateKeyFile = privateKeyFile
    }
}

/// A declared app (`app BUNDLEID { ... }`). Once any app is declared, other bundle ids are
/// quarantined.
public struct AppConfiguration: Sendable, Hashable {
    /// The bundle id, e.g. `com.acme.journal`.
    public var bundleId: String
    /// The app's Apple id, which production V2 notifications must carry; nil: not checked.
    public var appleId: UInt64?
    /// The app-specific shared secret that V1 notifications may carry in `password`.
    public var sharedSecret: ConfigSecret?

    public init(bundleId: String, appleId: UInt64? = nil, sharedSecret: ConfigSecret? = nil) {
        self.bundleId = bundleId
        self.appleId = appleId
        self.sharedSecret = sharedSecret
    }
}

/// One downstream that routes can name.
public struct DestinationConfiguration: Sendable, Hashable {
    /// What the destination is and how to deliver to it.
    public enum Kind: Sendable, Hashable {
        /// HTTP POST to a URL, with retries.
        case webhook(WebhookOptions)
        /// Append to JSON-lines segments in a directory.
        case file(FileQueueOptions)
    }

    /// The name routes use; letters, digits, `-`, `_`, `.` (safe in file names and metric labels).
    public var name: String
    /// The kind and its options.
    public var kind: Kind

    public init(name: String, kind: Kind) {
        self.name = name
        self.kind = kind
    }
}
