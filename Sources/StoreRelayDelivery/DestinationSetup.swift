import StoreRelayConfig
import StoreRelayStorage
import StoreRelayNet
import StoreRelayCore

/// A destination's driver and retry limits, built from its `routes.conf` definition: shared
/// by single-node destination queues and cluster mode's, so both deliver the same way.
package struct DestinationSetup: Sendable {
    /// `webhook` or `file`, for status listings and metrics.
    package let kind: String
    package let driver: any DeliveryDriver
    package let limits: DeliveryLimits

    /// Opens the destination (a file queue's directory now, so a bad one fails start-up).
    ///
    /// - Parameter fileSubdirectory: appended to a file queue's directory: in cluster mode
    ///   each instance writes under `DIR/<instance-id>/`, so instances sharing a volume never
    ///   write the same segment.
    package init(_ destination: DestinationConfiguration, client: HTTPClient, clock: any TimeSource, logger: Logger,
                 fileSubdirectory: String? = nil) throws {
        switch destination.kind {
        case .webhook(let options):
            kind = "webhook"
            driver = WebhookDriver(request: WebhookRequest(options: options), client: client, clock: clock)
            limits = DeliveryLimits(
                maxAttempts: options.maxAttempts, maxAge: options.maxAge,
                schedule: RetrySchedule(initial: options.backoffInitial, maximum: options.backoffMaximum))
        case .file(let options):
            kind = "file"
            var queueOptions = FileQueueOptions(
                rotateSize: options.rotateSize, rotateAge: options.rotateInterval,
                compression: options.compression == .gzip ? .gzip : .none)
            queueOptions.clock = clock
            let directory = fileSubdirectory.map { options.directory + "/" + $0 } ?? options.directory
            let fileQueue = try FileQueue.open(directory: directory, options: queueOptions, logger: logger)
            driver = FileQueueDriver(queue: fileQueue, clock: clock)
            // A local file queue fails only when the disk does: keep trying, briefly at first.
            limits = DeliveryLimits(
                maxAttempts: Int.max, maxAge: .seconds(365 * 86400),
                schedule: RetrySchedule(initial: .milliseconds(100), maximum: .seconds(30)))
        }
    }
}
