import StoreRelayConfig
import StoreRelayStorage
import StoreRelayNet
import StoreRelayCore

/// A destination's kind and retry limits, built from its `routes.conf` definition: what an
/// `AttemptRunner` is made of, in single-node and cluster mode alike. The one place that
/// knows every kind.
package struct DestinationSetup: Sendable {
    package let kind: any DestinationKind
    package let limits: DeliveryLimits

    /// `webhook`, `file`, `redis-stream`, `nats`, `amqp` or `sqs`, for status listings and metrics.
    package var kindName: String { type(of: kind).name }

    /// A destination of `kind`, retried within `limits` (tests; kinds built elsewhere).
    package init(kind: any DestinationKind, limits: DeliveryLimits) {
        self.kind = kind
        self.limits = limits
    }

    /// Opens the destination (a file queue's directory now, so a bad one fails start-up).
    ///
    /// - Parameter fileSubdirectory: appended to a file queue's directory: in cluster mode
    ///   each instance writes under `DIR/<instance-id>/`, so instances sharing a volume never
    ///   write the same segment.
    package init(_ destination: DestinationConfiguration, client: HTTPClient, clock: any TimeSource, logger: Logger,
                 fileSubdirectory: String? = nil) throws(DeliveryError) {
        switch destination.kind {
        case .webhook(let options):
            kind = WebhookKind(request: WebhookRequest(options: options), client: client)
            limits = DeliveryLimits(options.delivery)
        case .amqp(let options):
            kind = AMQPKind(options: options, logger: logger)
            limits = DeliveryLimits(options.delivery)
        case .sqs(let options):
            kind = SQSKind(options: options, client: client)
            limits = DeliveryLimits(options.delivery)
        case .file(let options):
            var queueOptions = FileQueueOptions(
                rotateSize: options.rotateSize, rotateAge: options.rotateInterval,
                compression: options.compression == .gzip ? .gzip : .none)
            queueOptions.clock = clock
            let directory = fileSubdirectory.map { options.directory + "/" + $0 } ?? options.directory
            do throws(StorageError) {
                kind = FileQueueKind(queue: try FileQueue.open(directory: directory, options: queueOptions, logger: logger))
            } catch {
                throw DeliveryError(destination: destination.name, error)
            }
            // A local file queue fails only when the disk does: keep trying, briefly at first.
            limits = DeliveryLimits(
                maxAttempts: Int.max, maxAge: .seconds(365 * 86400),
                schedule: RetrySchedule(initial: .milliseconds(100), maximum: .seconds(30)))
        case .redisStream(let options):
            kind = RedisStreamKind(options: options, logger: logger)
            limits = DeliveryLimits(options.delivery)
        case .nats(let options):
            kind = NATSKind(options: options, logger: logger)
            limits = DeliveryLimits(options.delivery)
        }
    }
}

/// How long and how often a destination keeps trying (from its `routes.conf` options).
package struct DeliveryLimits: Sendable {
    package var maxAttempts: Int
    package var maxAge: Duration
    package var schedule: RetrySchedule
    /// Attempts started per second or minute, retries included; nil: no limit.
    package var rate: DeliveryRate?

    /// The limits a destination's `max-attempts`, `max-age`, `backoff` and `rate` set.
    package init(_ options: DeliveryOptions) {
        maxAttempts = options.maxAttempts
        maxAge = options.maxAge
        schedule = RetrySchedule(initial: options.backoffInitial, maximum: options.backoffMaximum)
        rate = options.rate
    }

    package init(maxAttempts: Int, maxAge: Duration, schedule: RetrySchedule, rate: DeliveryRate? = nil) {
        self.maxAttempts = maxAttempts
        self.maxAge = maxAge
        self.schedule = schedule
        self.rate = rate
    }
}
