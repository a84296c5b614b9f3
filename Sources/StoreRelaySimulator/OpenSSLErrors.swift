internal import COpenSSL

/// The per-thread OpenSSL error queue, read where a call fails so the reason lands in the
/// error and a stale entry never surfaces in a later, unrelated call.
enum OpenSSLErrors {
    /// Queued errors as "reason (library)" strings joined by "; "; empties the queue.
    static func drain() -> String {
        var parts: [String] = []
        while true {
            let error = ERR_get_error()
            if error == 0 { break }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(error, &buffer, buffer.count)
            if parts.count < 4 {
                parts.append(buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) })
            }
        }
        return parts.joined(separator: "; ")
    }

    /// A `.signing` error for `what`, with OpenSSL's reason when it gave one.
    static func failure(_ what: String) -> SimulatorError {
        let detail = drain()
        return SimulatorError(.signing, detail.isEmpty ? what : "\(what): \(detail)")
    }
}
