import StoreRelayCluster
import StoreRelayDelivery
import StoreRelayNet
import StoreRelayStorage
import StoreRelayCore

/// Where an accepted notification is made durable before Apple gets its 200: the journal on
/// this machine (single-node mode), or the server every instance shares (cluster mode).
protocol NotificationStore: Sendable {
    /// Stores `notification` and hands it to delivery; `completion` says whether it was stored
    /// now, stored before (a duplicate), or could not be stored (the sentence says why).
    func store(_ notification: StoredNotification, completion: @escaping @Sendable (StoreOutcome) -> Void)
    /// Whether `id` was stored within the dedupe window (nil: could not tell, because the
    /// server did not answer or the id is being stored right now).
    func contains(id: String, completion: @escaping @Sendable (Bool?) -> Void)
    /// The largest stored record the store takes (the encoded `StoredNotification`).
    var maxRecordBytes: Int { get }
    /// Whether a notification could be stored now (`/readyz`).
    var isWritable: Bool { get }
    /// Why not, for `/readyz`'s 503.
    var notWritableMessage: String { get }
    /// What a 503 to Apple says went wrong, in a few words.
    var unavailableReason: String { get }
    /// How long ids are remembered: what the acceptance policy calls stale.
    var dedupeWindow: Duration { get }
    /// Takes the lease `name` for `duration` unless another instance holds it: in cluster
    /// mode one instance at a time reconciles an app (SPEC). `completion` says whether this
    /// instance holds it now (false too when the server cannot be asked).
    func takeLease(_ name: String, for duration: Duration, completion: @escaping @Sendable (Bool) -> Void)
}

enum StoreOutcome: Sendable {
    case stored
    case duplicate
    case failed(String)
}

/// Single-node mode: the journal, then the delivery engine.
struct JournalStore: NotificationStore {
    let journal: Journal
    let delivery: DeliveryEngine

    func store(_ notification: StoredNotification, completion: @escaping @Sendable (StoreOutcome) -> Void) {
        let payload = notification.encoded()
        journal.append(id: notification.id, payload: payload) { [delivery] outcome in
            switch outcome {
            case .stored(let position):
                // Answer first: Apple's 200 must not wait for fan-out to be planned.
                completion(.stored)
                let end = Journal.end(ofRecordAt: position, id: notification.id, payloadBytes: payload.count)
                delivery.submit(notification, position: position, end: end)
            case .duplicate:
                completion(.duplicate)
            case .failed(let error):
                completion(.failed("\(error)"))
            }
        }
    }

    /// A write under way may still fail: "stored" would be a promise, so nil.
    func contains(id: String, completion: @escaping @Sendable (Bool?) -> Void) {
        completion(journal.isBeingStored(id: id) ? nil : journal.contains(id: id))
    }

    var maxRecordBytes: Int { journal.options.maxPayloadBytes }

    var isWritable: Bool { journal.isWritable }
    var notWritableMessage: String { "The journal cannot write; notifications are refused with 503." }
    var unavailableReason: String { "the journal cannot write" }
    var dedupeWindow: Duration { journal.options.dedupeRetention }

    /// One instance: nobody to share with.
    func takeLease(_ name: String, for duration: Duration, completion: @escaping @Sendable (Bool) -> Void) { completion(true) }
}

/// Cluster mode: the acknowledgement script on the shared server; this instance's consumers
/// are told at once, the others find it at their next read. While the watch finds the server
/// not durable (a live `CONFIG SET`), or has no recent verdict on it (its connection refused
/// at `maxclients`, its `CONFIG GET` failing), nothing is acknowledged.
struct ClusterStore: NotificationStore {
    let client: RedisClient
    let watch: ServerWatch
    let acknowledgement: ClusterAcknowledgement
    let delivery: ClusterDelivery
    let dedupeWindow: Duration

    func store(_ notification: StoredNotification, completion: @escaping @Sendable (StoreOutcome) -> Void) {
        if let refusal = watch.acceptanceRefusal { return completion(.failed(refusal)) }
        acknowledgement.acknowledge(notification) { [delivery] outcome in
            switch outcome {
            case .stored:
                completion(.stored)
                if notification.disposition == .accept { delivery.nudge(notification.destinations) }
                delivery.serverEventLog.append(notification)
            case .duplicate:
                completion(.duplicate)
            case .unavailable(let why):
                completion(.failed(why))
            }
        }
    }

    func contains(id: String, completion: @escaping @Sendable (Bool?) -> Void) {
        acknowledgement.contains(id: id) { result in completion(try? result.get()) }
    }

    func takeLease(_ name: String, for duration: Duration, completion: @escaping @Sendable (Bool) -> Void) {
        delivery.takeLease(name, for: duration, completion: completion)
    }

    /// As the journal's: every instance reads records back, and a reply has a bound.
    var maxRecordBytes: Int { JournalOptions().maxPayloadBytes }

    /// Connected, answering within the watch's silence limit, and durable.
    var isWritable: Bool { client.isConnected && watch.problem == nil }
    var unavailableReason: String { "the cluster server did not acknowledge it" }
    var notWritableMessage: String {
        if client.isConnected, let problem = watch.problem {
            return "The cluster server cannot take notifications now (\(problem)); notifications are refused with 503."
        }
        return "The cluster server is unreachable or not durable (\(client.lastError?.message ?? "connecting")); notifications are refused with 503."
    }
}
