import Dispatch
import StoreRelayCore

/// The rules of one client connection's life, without I/O: one HTTP/1.1 exchange at a time
/// over an `OutboundConnection`, keep-alive between exchanges, and when a failure is worth a
/// retry on a fresh connection. `ClientConnection` feeds it the driver's events (with the
/// facts only the driver knows: whether the request's bytes went out, the time) and performs
/// the action it returns, as `HTTPConnection` does with `ConnectionStateMachine` on the server.
///
/// A fresh connection starts `connecting` with its first request already written (the driver
/// holds the bytes until it is established: `expectResponse` readies the parser for it);
/// `reuse` starts each later one.
struct ClientConnectionStateMachine {
    enum State: Equatable {
        /// Resolving, dialing or handshaking, bounded by the connect timeout once resolved.
        case connecting
        /// A request is out (or going out); its response is being read.
        case exchanging
        /// In the pool, waiting for a request, until the idle deadline.
        case idle
        case closed
    }

    enum Action {
        case none
        case setDeadline(DispatchTime)
        /// The response is whole. `idleUntil`: the connection goes back to the pool until
        /// then; nil: it closes.
        case complete(HTTPClientResponse, idleUntil: DispatchTime?)
        /// Close, and fail the request.
        case fail(HTTPClientError)
        /// Close; the request goes again on a fresh connection (nothing of it was sent).
        case retryOnFreshConnection
        /// Leave the pool and close: an idle connection the server closed or spoke on.
        case closeIdle
        case close
    }

    struct Settings {
        var origin: String
        var connectTimeout: Duration
        var idleTimeout: Duration
        var limits: HTTPResponseParser.Limits
    }

    private(set) var state = State.connecting
    private let settings: Settings
    private var parser: HTTPResponseParser
    /// True once the connection served a request: a failure before any byte of the next one
    /// was sent may be a stale keep-alive connection, worth one retry on a fresh one.
    private(set) var wasReused = false

    init(_ settings: Settings) {
        self.settings = settings
        parser = HTTPResponseParser(limits: settings.limits)
    }

    /// The first request, written while connecting, is a `HEAD` or not (its response has no
    /// body then, whatever its headers say).
    mutating func expectResponse(isHeadRequest: Bool) {
        parser = HTTPResponseParser(limits: settings.limits, isHeadRequest: isHeadRequest)
    }

    /// The name resolved: the connect timeout starts (resolution is bounded only by the
    /// request's own timeout).
    mutating func resolved(now: DispatchTime) -> Action {
        guard state == .connecting else { return .none }
        return .setDeadline(now.advanced(by: settings.connectTimeout))
    }

    /// Connected (and TLS established): the first request is on its way.
    mutating func established() -> Action {
        guard state == .connecting else { return .none }
        state = .exchanging
        return .setDeadline(.distantFuture)
    }

    /// An idle connection takes the next request (the caller checked it is idle: one the
    /// server closed meanwhile needs another connection): the idle deadline ends.
    mutating func reuse(isHeadRequest: Bool) -> Action {
        precondition(state == .idle, "only an idle connection is reused")
        state = .exchanging
        parser = HTTPResponseParser(limits: settings.limits, isHeadRequest: isHeadRequest)
        return .setDeadline(.distantFuture)
    }

    /// Bytes arrived. `outputFlushed`: the whole request was sent (a response that came before
    /// the end of its request leaves the connection unfit for another).
    mutating func received(_ bytes: some Collection<UInt8>, outputFlushed: Bool, now: DispatchTime) -> Action {
        switch state {
        case .exchanging:
            guard !bytes.isEmpty else { return .none }
            do {
                guard case .complete(let response, let reusable) = try parser.consume(bytes) else { return .none }
                return complete(response, reusable: reusable && outputFlushed, now: now)
            } catch {
                state = .closed
                return .fail(HTTPClientError(response: error))
            }
        case .idle:
            // Anything but silence (a TLS session ticket never gets here): unfit for reuse.
            return closeIdle()
        case .connecting, .closed:
            return .none
        }
    }

    /// The peer closed: the end of a read-until-close body, a stale keep-alive connection, or
    /// a response cut short. `requestBytesSent`: any byte of the current request went out.
    mutating func inputEnded(requestBytesSent: Bool) -> Action {
        switch state {
        case .exchanging:
            if wasReused && !requestBytesSent && !parser.hasReceivedBytes { return retry() }
            do {
                let response = try parser.endOfStream()
                return complete(response, reusable: false, now: .now())
            } catch {
                state = .closed
                let failure = HTTPClientError(response: error)
                return .fail(HTTPClientError(failure.code, "\(settings.origin): \(failure.message)"))
            }
        case .idle:
            return closeIdle()
        case .connecting, .closed:
            return close()
        }
    }

    /// The driver failed (and closed).
    mutating func failed(_ error: OutboundError, requestBytesSent: Bool) -> Action {
        switch state {
        case .exchanging where wasReused && !requestBytesSent:
            return retry()
        case .idle:
            return closeIdle()
        case .closed:
            return .none
        case .connecting, .exchanging:
            state = .closed
            return .fail(HTTPClientError(error))
        }
    }

    /// The deadline set last passed: the connect timeout, or the idle one.
    mutating func deadlinePassed() -> Action {
        switch state {
        case .connecting:
            state = .closed
            return .fail(HTTPClientError(.connectTimeout, "no connection to \(settings.origin) within \(settings.connectTimeout)"))
        case .idle:
            return closeIdle()
        case .exchanging, .closed:
            return .none
        }
    }

    mutating func close() -> Action {
        guard state != .closed else { return .none }
        state = .closed
        return .close
    }

    private mutating func complete(_ response: HTTPClientResponse, reusable: Bool, now: DispatchTime) -> Action {
        guard reusable else {
            state = .closed
            return .complete(response, idleUntil: nil)
        }
        state = .idle
        wasReused = true
        return .complete(response, idleUntil: now.advanced(by: settings.idleTimeout))
    }

    private mutating func retry() -> Action {
        state = .closed
        return .retryOnFreshConnection
    }

    private mutating func closeIdle() -> Action {
        state = .closed
        return .closeIdle
    }
}

extension HTTPClientError {
    /// The driver's failure in the client's terms: a TLS failure (setup, handshake, record
    /// layer) is `.tls`, a socket failure after the handshake `.io`; a resolver that threw an
    /// `HTTPClientError` is heard as it spoke.
    init(_ error: OutboundError) {
        switch error.code {
        case .resolution:
            if let own = error.resolverError as? HTTPClientError {
                self = own
            } else {
                self.init(.resolution, error.resolverError.map { "\($0)" } ?? error.message)
            }
        case .connect:
            self.init(.connect, error.message, errno: error.errno)
        case .tlsSetup:
            self.init(.tls, error.message, tlsError: error.tlsError)
        case .handshake:
            self.init(.tls, error.message, tlsError: error.tlsError, errno: error.tlsReason == nil ? error.errno : nil)
        case .io:
            if error.tlsReason != nil {
                self.init(.tls, error.message, tlsError: error.tlsError)
            } else {
                self.init(.io, error.message, errno: error.errno)
            }
        }
    }
}
