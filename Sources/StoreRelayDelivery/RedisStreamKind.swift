import StoreRelayConfig
import StoreRelayNet
import StoreRelayCore

/// Appends each event to a Redis stream with `XADD` (SPEC "Destinations beyond webhooks"):
/// the entry's fields are the event's metadata (`id`, `type`, `environment`, `bundleId`...)
/// and `event`, the body a webhook would receive. Delivered once the server answers with the
/// entry's id, which it does only after the entry is in the stream.
struct RedisStreamKind: DestinationKind {
    static let name = "redis-stream"

    let options: RedisStreamOptions
    /// One pipelined connection, reconnected by the client after any failure: attempts made
    /// while it is down fail at once (`unavailable`) and are retried with the backoff.
    let client: RedisClient

    /// Error replies that say the server cannot take a write now, not that it never will:
    /// loading its data set, a script running, a failover, a full memory.
    static let transientErrors: Set<Substring> = ["LOADING", "BUSY", "TRYAGAIN", "MASTERDOWN", "READONLY", "CLUSTERDOWN", "OOM"]

    var concurrency: Int { options.delivery.concurrency }

    func prepare(_ notification: StoredNotification) -> [UInt8] { EventMessage.body(for: notification, options.delivery) }

    func send(_ job: DeliveryJob, attempt: Int, now: Timestamp, answer: @escaping @Sendable (Result<RESPValue, RedisError>) -> Void) {
        client.send(command(for: job), completion: answer)
    }

    /// `XADD stream [MAXLEN ~ N] * id … type … environment … bundleId … event BODY`.
    func command(for job: DeliveryJob) -> RESPCommand {
        let event = job.notification.event
        var arguments: [[UInt8]] = [Array("XADD".utf8), Array(options.stream.expand(for: event).utf8)]
        if let maxLength = options.maxLength {
            arguments += [Array("MAXLEN".utf8), Array("~".utf8), Array(String(maxLength).utf8)]
        }
        arguments.append(Array("*".utf8))
        for field in EventMessage.metadata(for: job) {
            arguments += [Array(field.name.utf8), Array(field.value.utf8)]
        }
        arguments += [Array("event".utf8), job.body]
        return RESPCommand(arguments)
    }

    /// An entry id is delivery; an error reply refuses the entry (WRONGTYPE: the key is not a
    /// stream) unless it is one of the transient ones; no answer is retried.
    func classify(_ answer: Result<RESPValue, RedisError>, started: Timestamp, durationMs: Int64, now: Timestamp) -> AttemptOutcome {
        switch answer {
        case .failure(let error):
            return .retry(DeliveryAttempt(at: started, error: "\(error.code): \(error.message)", durationMs: durationMs), retryAfter: nil)
        case .success(let reply):
            if reply.string != nil, reply.errorKind == nil {
                return .delivered(DeliveryAttempt(at: started, durationMs: durationMs))
            }
            if case .error(let message) = reply {
                let attempt = DeliveryAttempt(at: started, error: "Redis refused XADD: \(message)", durationMs: durationMs)
                return Self.transientErrors.contains(reply.errorKind ?? "") ? .retry(attempt, retryAfter: nil) : .reject(attempt)
            }
            return .retry(DeliveryAttempt(at: started, error: "XADD answered \(reply), not an entry id", durationMs: durationMs), retryAfter: nil)
        }
    }

    func close(completion: @escaping @Sendable () -> Void) {
        client.shutdown()
        completion()
    }
}

extension RedisStreamKind {
    /// The kind for `options`, its client connecting from now on.
    init(options: RedisStreamOptions, logger: Logger) {
        var configuration = RedisConfiguration(url: options.url)
        configuration.caFile = options.caFile
        configuration.commandTimeout = options.delivery.timeout
        configuration.connectTimeout = min(options.delivery.timeout, .seconds(5))
        configuration.clientName = "storerelay-redis-stream"
        configuration.logger = logger
        let client = RedisClient(configuration: configuration)
        client.start()
        self.init(options: options, client: client)
    }
}
