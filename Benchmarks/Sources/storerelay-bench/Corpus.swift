import BenchKit
import Dispatch
import StoreRelaySimulator
import StoreRelayCore

/// Unique, realistically sized V2 notifications, signed before any timed phase.
///
/// Each is a DID_RENEW built by the project's own simulator (`NotificationFactory`) and signed
/// by the Apple-shaped chain from `make-chain.sh`: three JWS (notification, transaction,
/// renewal), each with a three-certificate `x5c`, so the gateway does three ES256
/// verifications per notification, like Apple's. Every notification has its own UUID and its
/// own nested signatures, so nothing can be answered from a cache or as a duplicate.
struct Corpus {
    /// Complete HTTP requests (`POST path` with the body), ready to write.
    let requests: [[UInt8]]
    /// The notificationUUID of each request (the event id downstreams see).
    let ids: [String]
    let indexByID: [String: Int]
    let meanBodyBytes: Int
    let signingSeconds: Double

    static func make(count: Int, authority: DevCertificateAuthority, path: String, environment: AppStoreEnvironment = .sandbox) throws -> Corpus {
        let started = Monotonic.nanoseconds()
        let factory = NotificationFactory(authority: authority)
        var template = NotificationRequest(type: "DID_RENEW")
        template.environment = environment
        let request = template
        let bodies = Locked([String?](repeating: nil, count: count))
        let ids = Locked([String](repeating: "", count: count))
        let failure = Locked<String?>(nil)
        let workers = 2
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            var index = worker
            while index < count {
                do {
                    let notification = try factory.make(request)
                    let body = notification.httpBody
                    let id = notification.notificationUUID
                    bodies.withLock { $0[index] = body }
                    ids.withLock { $0[index] = id }
                } catch {
                    failure.withLock { $0 = "\(error)" }
                    return
                }
                index += workers
            }
        }
        if let message = failure.current { throw BenchError("cannot sign notifications: \(message)") }
        let allIDs = ids.current
        var total = 0
        let requests = bodies.current.map { body -> [UInt8] in
            let body = body!
            total += body.utf8.count
            return Array(("POST \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                + "User-Agent: App Store Server Notifications (StoreRelay bench)\r\n"
                + "Content-Length: \(body.utf8.count)\r\n\r\n" + body).utf8)
        }
        var index: [String: Int] = [:]
        index.reserveCapacity(count)
        for (position, id) in allIDs.enumerated() { index[id] = position }
        return Corpus(
            requests: requests, ids: allIDs, indexByID: index,
            meanBodyBytes: count == 0 ? 0 : total / count,
            signingSeconds: Double(Monotonic.nanoseconds() - started) / 1e9)
    }
}
