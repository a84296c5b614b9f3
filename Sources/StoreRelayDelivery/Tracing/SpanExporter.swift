import Dispatch
import StoreRelayNet
import StoreRelayCore

/// Sends recorded spans to an OTLP/HTTP collector (`tracing otlp URL`) as JSON, in batches:
/// every `interval`, or as soon as `batchSize` spans wait. One export is in flight at a time
/// and the buffer is bounded, so a collector that is slow or down costs spans (counted by
/// `dropped`), never a thread or the acceptance path: `record` only takes a lock.
package final class SpanExporter: Sendable {
    /// How much waits and how often it goes.
    package struct Limits: Sendable {
        /// Spans held at most; beyond it they are dropped and counted.
        package var capacity = 4096
        /// Spans per request, and the count that triggers an export before the interval.
        package var batchSize = 512
        package var interval: Duration = .seconds(1)
        /// One export's deadline (connect, send, answer).
        package var timeout: Duration = .seconds(10)

        package init() {}
    }

    package let url: HTTPURL
    private let caFile: String?
    private let limits: Limits
    private let buffer: SpanBuffer
    private let client: HTTPClient
    /// Told how many spans were lost and why (`buffer_full`, `export_failed`).
    private let dropped: @Sendable (_ count: Int, _ reason: String) -> Void
    private let logger: Logger
    private let serviceVersion: String
    private let queue = DispatchQueue(label: "storerelay.tracing.export", target: .deliveryWork)
    private let timer = RepeatingTimer()
    /// Whether the last export failed: logged once per outage, not once per second.
    private let failing = Locked(false)
    /// Set by `stop`: the export under way is the last.
    private let stopping = Locked(false)

    package init(url: HTTPURL, caFile: String? = nil, limits: Limits = Limits(), serviceVersion: String,
                 logger: Logger, dropped: @escaping @Sendable (_ count: Int, _ reason: String) -> Void) {
        self.url = url
        self.caFile = caFile
        self.limits = limits
        self.serviceVersion = serviceVersion
        self.logger = logger
        self.dropped = dropped
        buffer = SpanBuffer(capacity: limits.capacity)
        var configuration = HTTPClientConfiguration()
        configuration.completionQueue = queue
        client = HTTPClient(configuration: configuration)
        timer.start(after: limits.interval, every: limits.interval, leeway: .milliseconds(100), on: queue) { [weak self] in
            self?.export()
        }
    }

    /// Keeps `span` for the next export; drops and counts it when the buffer is full.
    package func record(_ span: TraceSpan) {
        let (kept, count) = buffer.append(span)
        if !kept { return dropped(1, "buffer_full") }
        if count == limits.batchSize { queue.async { [weak self] in self?.export() } }
    }

    /// Spans waiting for export.
    package var waiting: Int { buffer.count }

    /// Stops the timer and sends one last batch without waiting for its answer; the
    /// client's connections close when it comes (at once when nothing is to be sent).
    package func stop() {
        timer.stop()
        queue.async { [self] in
            stopping.withLock { $0 = true }
            if !export() { client.shutdown() }
        }
    }

    /// Sends the oldest batch, if no export is in flight; runs on `queue`. False when
    /// nothing was sent.
    @discardableResult
    private func export() -> Bool {
        guard let batch = buffer.takeBatch(limit: limits.batchSize) else { return false }
        let body = OTLPTraceEncoder.request(batch, serviceName: "storerelay", version: serviceVersion)
        let request = HTTPClientRequest(method: "POST", url: url, headers: ["Content-Type": "application/json"], body: body,
                                        extraCAFile: caFile)
        client.execute(request, timeout: limits.timeout) { [self] result in
            let failure: String? = switch result {
            case .success(let response) where (200..<300).contains(response.status): nil
            case .success(let response): "HTTP \(response.status)"
            case .failure(let error): "\(error.code): \(error.message)"
            }
            noteExport(failure: failure, spans: batch.count)
            buffer.exportFinished()
            if stopping.current { return client.shutdown() }
            // A backlog goes out at once rather than a batch per interval.
            if buffer.count >= limits.batchSize { export() }
        }
        return true
    }

    private func noteExport(failure: String?, spans: Int) {
        let wasFailing = failing.withLock { failing in
            defer { failing = failure != nil }
            return failing
        }
        guard let failure else {
            if wasFailing { logger.info("trace export recovered", [("url", url.description)]) }
            return
        }
        dropped(spans, "export_failed")
        if !wasFailing {
            logger.warning("trace export failed; spans are dropped until the collector answers",
                           [("url", url.description), ("error", failure)])
        }
    }
}
