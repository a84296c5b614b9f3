/// StoreRelay's release version, reported by `storerelay version` and in `User-Agent`.
public enum StoreRelayVersion {
    public static let current = "0.1.0"
}
