import StoreRelayNet

/// Who a request to the admin listener comes from, as the login throttle counts failures and
/// its log lines name the client: the peer's address, or, when the peer is a `trusted-proxy`,
/// the client its `X-Forwarded-For` names.
///
/// Behind a proxy every request has the proxy's address: keyed by it, one client's wrong
/// tokens would pause everyone. Only a configured proxy is believed, since any client can
/// send the header.
struct AdminClientAddress: Sendable {
    let trustedProxies: [IPAddressRange]

    /// The address failures are counted against. `X-Forwarded-For` is read from the right
    /// (each proxy appends the address it was reached from), skipping trusted proxies: the
    /// first address no trusted proxy owns is the client's. What lies left of it was written
    /// by the client and proves nothing; an entry that is not an address ends the walk at the
    /// last trusted hop.
    func client(of request: HTTPRequest) -> String {
        let peer = request.remoteHost ?? ""
        guard isTrusted(peer) else { return peer }
        let hops = request.headers.values(for: "X-Forwarded-For")
            .flatMap { $0.split(separator: ",") }
            .map { String($0).trimmingSpaces }
        var client = peer
        for hop in hops.reversed() {
            guard IPAddressRange.bytes(of: hop) != nil else { break }
            client = hop
            guard isTrusted(hop) else { break }
        }
        return client
    }

    private func isTrusted(_ address: String) -> Bool {
        trustedProxies.contains { $0.contains(address) }
    }
}
