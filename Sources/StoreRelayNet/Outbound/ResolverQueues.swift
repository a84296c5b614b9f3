import Dispatch
import StoreRelayCore

/// One serial queue per host name for name resolution, so a lookup that hangs holds up only
/// later lookups of the same name, never another peer's connections. Peers are few and
/// long-lived, so the queues are kept for the owner's lifetime.
final class ResolverQueues: Sendable {
    private let resolver: any HostResolver
    private let queues = Locked<[String: DispatchQueue]>([:])

    init(resolver: any HostResolver) {
        self.resolver = resolver
    }

    /// Resolves `host` off the caller's queue and calls back on `queue`. IP literals skip
    /// the resolver entirely.
    func resolve(
        host: String, port: UInt16, replyOn queue: DispatchQueue,
        _ completion: @escaping @Sendable (Result<[SocketAddress], any Error>) -> Void
    ) {
        if let literal = SocketAddress(ip: host, port: port) {
            queue.async { completion(.success([literal])) }
            return
        }
        let resolver = self.resolver
        self.queue(for: host).async {
            let result = Result { try resolver.resolve(host: host, port: port) }
            queue.async { completion(result) }
        }
    }

    private func queue(for host: String) -> DispatchQueue {
        queues.withLock { queues in
            if let queue = queues[host] { return queue }
            let queue = DispatchQueue(label: "storerelay.resolve.\(host)")
            queues[host] = queue
            return queue
        }
    }
}
