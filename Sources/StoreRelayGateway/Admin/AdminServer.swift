import Dispatch
import StoreRelayNet
import StoreRelayCore

/// The admin listener (SPEC "Dead letters and admin listener"): `/metrics` for anyone, the
/// JSON API behind `Authorization: Bearer <token>`, and a server-rendered page behind a login
/// session or the same bearer token.
///
/// ```swift
/// let admin = AdminServer(backend: gateway, token: token, configuration: .init(address: "127.0.0.1:9090"),
///                         metrics: { registry.render() }, logger: logger)
/// try admin.start()
/// ```
///
/// Requests are answered by tasks that run on one serial queue of its own (`AdminExecutor`):
/// admin traffic is light, and the backend reads dead-letter files, which must not run on
/// the HTTP connection queues nor on the cooperative pool. A request waiting for the cluster
/// server suspends, leaving the queue to the others.
public final class AdminServer: Sendable {
    /// Prometheus text exposition format 0.0.4.
    public static let prometheusContentType = "text/plain; version=0.0.4; charset=utf-8"

    let handler: AdminHandler
    private let server: HTTPServer

    /// - Parameters:
    ///   - token: the admin token (`AdminToken.resolve`); compared in constant time.
    ///   - metrics: renders the Prometheus text for `/metrics`.
    ///   - sessionLifetime: how long a page login lasts.
    ///   - sessionsFile: where page sessions are kept across restarts (0600); nil keeps them
    ///     in memory only.
    ///   - trustedProxies: peers whose `X-Forwarded-For` names the client (`trusted-proxy`).
    public init(
        backend: any AdminBackend, token: String, configuration: HTTPServerConfiguration,
        metrics: @escaping @Sendable () async -> String, metricsContentType: String = AdminServer.prometheusContentType,
        logger: Logger = .disabled, clock: any TimeSource = WallClock(), sessionLifetime: Duration = .seconds(8 * 3600),
        sessionsFile: String? = nil, trustedProxies: [IPAddressRange] = []
    ) {
        precondition(!token.isEmpty, "the admin token must not be empty")
        let handler = AdminHandler(
            backend: backend, token: token, metrics: metrics, metricsContentType: metricsContentType,
            sessions: AdminSessions(clock: clock, lifetime: sessionLifetime, secret: token, file: sessionsFile, logger: logger),
            throttle: LoginThrottle(clock: clock), clients: AdminClientAddress(trustedProxies: trustedProxies),
            clock: clock, logger: logger)
        self.handler = handler
        let executor = AdminExecutor(label: "storerelay.admin")
        server = HTTPServer(configuration: configuration, logger: logger) { request, responder in
            handler.respond(to: request, on: executor) { responder.respond($0) }
        }
    }

    /// Binds and starts serving; returns the bound port.
    @discardableResult
    public func start() throws(HTTPServerError) -> Int { try server.start() }

    /// The bound port once started.
    public var port: Int? { server.port }

    /// Stops accepting, answers requests in flight, then calls `completion`.
    public func shutdown(completion: @escaping @Sendable () -> Void = {}) { server.shutdown(completion: completion) }
}
