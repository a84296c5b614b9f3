import StoreRelayCore

/// What a handler gets to answer its request: a one-shot, thread-safe callback.
public typealias HTTPHandler = @Sendable (HTTPRequest, HTTPResponder) -> Void

/// Answers one request, once, from any thread and at any later time.
///
/// The server keeps pipelined answers in request order whatever order handlers finish in.
/// Only the first `respond` counts. A responder released without answering sends
/// 500 `internal`, so a handler bug can never stall the connection's pipeline forever.
public final class HTTPResponder: Sendable {
    private let deliver: Locked<(@Sendable (HTTPResponse) -> Void)?>

    /// `deliver` receives the one response; tests may build responders around a closure.
    public init(_ deliver: @escaping @Sendable (HTTPResponse) -> Void) {
        self.deliver = Locked(deliver)
    }

    deinit {
        if let deliver = deliver.withLock({ $0.take() }) {
            deliver(.error(.internalError))
        }
    }

    /// Sends `response`. Returns false (and does nothing) if the request was already answered.
    @discardableResult
    public func respond(_ response: HTTPResponse) -> Bool {
        guard let deliver = deliver.withLock({ $0.take() }) else { return false }
        deliver(response)
        return true
    }
}
