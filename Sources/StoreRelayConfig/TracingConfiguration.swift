import StoreRelayNet

/// `tracing otlp URL [ca-file PEM-FILE]`: where the gateway's spans (receive, verify, journal,
/// each delivery attempt) are sent, as OTLP/HTTP JSON (SPEC "Event log, search and
/// operational events", Tracing). Without it nothing is recorded or sent; outgoing requests
/// carry a `traceparent` either way.
public struct TracingConfiguration: Sendable, Hashable {
    /// The collector's traces endpoint, e.g. `http://127.0.0.1:4318/v1/traces` (OTLP/HTTP's
    /// default path is not added: the URL is used as written). Plain http only on loopback.
    public var url: HTTPURL
    /// Extra CAs trusted for an https collector, as a webhook's `ca-file`.
    public var caFile: String?

    public init(url: HTTPURL, caFile: String? = nil) {
        self.url = url
        self.caFile = caFile
    }
}
