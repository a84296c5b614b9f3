import StoreRelayCore

/// One `route` line: which events it matches and where they go.
public struct RouteRule: Sendable, Hashable {
    /// A type-column entry: `TYPE` or `TYPE/*` (any subtype), `TYPE/SUBTYPE`, or `TYPE/-`
    /// (only without a subtype: DID_RENEW/- is a renewal, not a billing recovery).
    public struct TypePattern: Sendable, Hashable, CustomStringConvertible {
        /// The `subtype` of `TYPE/-`: no Apple subtype is spelled so.
        public static let noSubtype = "-"

        /// The notification type, e.g. `DID_RENEW`.
        public var type: String
        /// The required subtype (`noSubtype`: none); nil matches any subtype, including none.
        public var subtype: String?

        public init(type: String, subtype: String? = nil) {
            self.type = type
            self.subtype = subtype
        }

        public var description: String { subtype.map { "\(type)/\($0)" } ?? type }

        func matches(type: String, subtype: String?) -> Bool {
            self.type == type && (self.subtype == nil || self.subtype == (subtype ?? Self.noSubtype))
        }
    }

    /// Environments matched; nil is `*`.
    public var environments: [AppStoreEnvironment]?
    /// Bundle ids matched; nil is `*`.
    public var bundleIds: [String]?
    /// Types matched; nil is `*` (every type and subtype).
    public var types: [TypePattern]?
    /// Destination names, in the order written.
    public var destinations: [String]
    /// Line of the route in its file (0 when built in code), for `check` and diagnostics.
    public var line: Int

    public init(
        environments: [AppStoreEnvironment]?, bundleIds: [String]?, types: [TypePattern]?,
        destinations: [String], line: Int = 0
    ) {
        self.environments = environments
        self.bundleIds = bundleIds
        self.types = types
        self.destinations = destinations
        self.line = line
    }

    /// Whether an event with these attributes matches every column of this route.
    public func matches(environment: AppStoreEnvironment, bundleId: String, type: String, subtype: String?) -> Bool {
        (environments?.contains(environment) ?? true)
            && (bundleIds?.contains(bundleId) ?? true)
            && (types?.contains { $0.matches(type: type, subtype: subtype) } ?? true)
    }

    /// The three columns as routes.conf writes them: `production com.acme.journal REFUND,REVOKE`.
    public var columnsDescription: [String] {
        [
            environments.map { $0.map(\.rawValue).joined(separator: ",") } ?? "*",
            bundleIds.map { $0.joined(separator: ",") } ?? "*",
            types.map { $0.map(\.description).joined(separator: ",") } ?? "*",
        ]
    }
}
