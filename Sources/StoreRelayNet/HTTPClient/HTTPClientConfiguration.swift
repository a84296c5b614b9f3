import Dispatch
public import StoreRelayCore

/// How an `HTTPClient` connects, pools and limits. Every field has a sensible default.
public struct HTTPClientConfiguration: Sendable {
    /// Time to establish a connection: TCP connect (over every resolved address) plus the TLS
    /// handshake. Name resolution is bounded only by the request's overall timeout.
    public var connectTimeout: Duration = .seconds(10)
    /// An idle pooled connection is closed after this long unused.
    public var idleTimeout: Duration = .seconds(60)
    /// Idle connections kept per origin (scheme, host, port, extra CA file); more are closed.
    /// At least the attempts in flight to one origin (the sum of the `concurrency` of the
    /// destinations on it): with fewer, each burst closes connections only to open them again,
    /// and at a few thousand requests a second that churn cut throughput five-fold.
    public var maxIdleConnectionsPerOrigin = 64
    /// Larger response bodies fail with `.responseTooLarge` (webhook answers are small).
    public var maxResponseBodySize = 1024 * 1024
    /// Larger response heads fail with `.protocol`.
    public var maxResponseHeadSize = 64 * 1024
    /// Name resolution; each host name gets its own serial queue.
    public var resolver: any HostResolver = SystemHostResolver()
    /// Where completions run. Keep them short: record the result, start the next thing.
    public var completionQueue: DispatchQueue = .global()
    public var logger: Logger = .disabled

    public init() {}
}
