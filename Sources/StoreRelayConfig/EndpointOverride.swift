public import StoreRelayNet

/// Where one of Apple's or Google's services is reached instead of its own host (tests, a
/// proxy), and the CA that vouches for that host: `apple-api-url URL [ca-file FILE]` (the App
/// Store Server API), `google-certs-url URL [ca-file FILE]` (Google's push-token keys) and
/// `google-api-url URL [ca-file FILE]` (the Play Developer API). Plain `http://` is accepted
/// for loopback hosts only (the parser checks).
public struct EndpointOverride: Sendable, Hashable {
    public var url: HTTPURL
    public var caFile: String?

    public init(url: HTTPURL, caFile: String? = nil) {
        self.url = url
        self.caFile = caFile
    }
}
