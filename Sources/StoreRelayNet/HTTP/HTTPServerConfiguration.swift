#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Everything an `HTTPServer` can be tuned with. Every field has a production default;
/// tests inject short timeouts and small limits.
public struct HTTPServerConfiguration: Sendable {
    /// `host:port` to listen on: `0.0.0.0:8080`, `127.0.0.1:0`, `[::1]:0`, `[::]:443`,
    /// `localhost:8080`. Port 0 picks a free port; `HTTPServer.start()` returns the real one.
    public var address: String = "0.0.0.0:8080"

    /// Pending-connection queue length passed to `listen(2)` (the kernel caps it at somaxconn,
    /// 4096 by default since Linux 5.4). Deep, because a flood that re-opens whatever is shed
    /// or refused keeps its excess in this queue: once it is full Linux drops every new SYN,
    /// a genuine client's too, which then retries after 1 s, 3 s, 7 s.
    public var backlog: Int32 = 4096

    /// Request line plus header section limit; over it the answer is 431.
    public var maxHeaderBytes: Int = 16 * 1024

    /// Request body limit (the SPEC's `max-body`); over it the answer is 413, sent before any
    /// body byte is read when `Content-Length` announces it.
    public var maxBodyBytes: Int = 1024 * 1024

    /// Time allowed from a request's first byte to its last; then 408 and close. The upper
    /// bound of every request, whatever its pace.
    public var readTimeout: Duration = .seconds(30)

    /// Time allowed for a request's head (request line and headers): from the accept for a
    /// connection's first request (a TLS handshake included), from its first byte for later
    /// ones; then 408 and close. Shorter than `readTimeout`, because a head is small and
    /// comes at once from any real client: one that trickles it is holding the connection.
    public var headerTimeout: Duration = .seconds(10)

    /// The slowest a body may arrive, in bytes per second, once `bodyRateGrace` has passed
    /// since its head: by `bodyRateGrace + t` at least `minBodyRate × t` bytes of it must be
    /// in, else 408 and close. So a client announcing a body and sending a byte a second is
    /// closed in seconds, not at `readTimeout`. 0 turns the check off.
    public var minBodyRate: Int = 1024

    /// See `minBodyRate`: the start a body gets before its rate counts (a TCP slow start, a
    /// deferred `100 Continue`).
    public var bodyRateGrace: Duration = .seconds(2)

    /// How long a keep-alive connection may sit with no request in progress before it is
    /// closed quietly. A connection that has not sent a request yet gets `headerTimeout` or
    /// `readTimeout` if shorter: a client that connects and says nothing must not hold a
    /// connection for long.
    public var idleTimeout: Duration = .seconds(60)

    /// How long pending output may make no progress (a peer that stopped reading) before the
    /// connection is dropped.
    public var writeTimeout: Duration = .seconds(30)

    /// After an error response the server half-closes and keeps discarding input this long
    /// before closing, so the peer reads the response instead of a TCP reset.
    public var lingerTimeout: Duration = .seconds(2)

    /// Open connections allowed at once. At the cap a new connection takes the place of one
    /// that has made little progress (idle, or still sending its request), preferably of the
    /// client holding the most connections, which is closed at once; or it is refused (see
    /// `ConnectionLimits`). A connection whose request is whole and being answered is never
    /// closed for this: with every connection in that state the server stops accepting (new
    /// connections wait in the kernel backlog) and looks again every `acceptBackoff`.
    public var maxConnections: Int = 1024

    /// Open connections allowed from one client: one IPv4 address, or one IPv6 /64
    /// (`SocketAddress.addressGroup`). At the cap a new connection from that client takes
    /// the place of its oldest idle one, or is closed at once when none is idle: one client
    /// cannot hold every connection the server has.
    public var maxConnectionsPerAddress: Int = 256

    /// Requests read ahead of their answers on one connection (pipelining); reading pauses
    /// at this depth until answers go out.
    public var maxPipelinedRequests: Int = 16

    /// Output bytes queued on one connection above which reading pauses (backpressure).
    public var maxPendingOutputBytes: Int = 1024 * 1024

    /// How long accepting pauses after `accept` fails for lack of file descriptors
    /// (EMFILE/ENFILE), instead of spinning on a listening socket that stays readable.
    public var acceptBackoff: Duration = .milliseconds(100)

    /// How long `shutdown` waits for requests in flight before closing connections anyway.
    public var shutdownTimeout: Duration = .seconds(10)

    /// TLS for every accepted connection; nil serves plain HTTP (TLS terminated by a proxy,
    /// if any). The handshake must finish within `headerTimeout` (or `readTimeout`, if shorter).
    public var tls: HTTPServerTLS? = nil

    /// Serial queues shared by all connections; each connection gets its own serial queue
    /// targeting one of these, so the thread count stays bounded by this number.
    public var queueCount: Int = max(1, min(4, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))))

    public init() {}

    public init(address: String) {
        self.address = address
    }

    var parserLimits: HTTPRequestParser.Limits {
        HTTPRequestParser.Limits(maxHeaderBytes: maxHeaderBytes, maxBodyBytes: maxBodyBytes)
    }
}
