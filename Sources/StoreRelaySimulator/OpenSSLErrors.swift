import StoreRelayCrypto

/// Failures of the simulator's own OpenSSL calls, with the reason taken from (and emptied out
/// of) the per-thread error queue, so a stale entry never surfaces in a later, unrelated call.
enum OpenSSLErrors {
    /// A `.signing` error for `what`, with OpenSSL's reason when it gave one.
    static func failure(_ what: String) -> SimulatorError {
        let detail = OpenSSLErrorQueue.drain()
        return SimulatorError(.signing, detail.isEmpty ? what : "\(what): \(detail)")
    }
}
