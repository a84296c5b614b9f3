import Foundation
import StoreRelayAppStore
import StoreRelayConfig
import StoreRelayCrypto
import StoreRelayDelivery
import StoreRelayHTTP
import StoreRelayJournal
import StoreRelaySupport

/// The running gateway: journal, fan-out, verification pipeline and public listener.
///
/// Start order is journal → delivery (resuming what the journal holds) → verifier →
/// listener, so nothing is accepted before it can be stored and delivered; `stop` runs the
/// other way round (SPEC "Operations").
public final class Gateway: Sendable {
    public let configuration: GatewayConfiguration
    private let logger: Logger
    private let journal: Journal
    private let delivery: DeliveryEngine
    private let intake: NotificationIntake
    private let publicServer: HTTPServer
    private let stopping = Locked(false)

    /// Loads the TLS files (when `tls` is set), opens the journal under the data directory,
    /// loads the trust roots and starts listening.
    public init(configuration: GatewayConfiguration, logger: Logger, clock: any Clock = WallClock()) throws(GatewayError) {
        self.configuration = configuration
        self.logger = logger
        // Before the journal opens: a bad certificate or key must not leave anything behind.
        let publicTLS = try Self.loadTLS(configuration)
        let journalDirectory = configuration.dataDirectory + "/journal"
        do {
            journal = try Journal.open(directory: journalDirectory, logger: logger)
        } catch {
            throw GatewayError("cannot open the journal in \(journalDirectory): \(error)")
        }
        for issue in journal.recoveryIssues {
            logger.warning("journal recovery", [("issue", "\(issue)")])
        }
        do {
            let deadLetters = try DeadLetterStore.open(directory: configuration.dataDirectory + "/dead-letters", logger: logger)
            delivery = try DeliveryEngine(configuration: configuration, journal: journal, deadLetters: deadLetters,
                                          clock: clock, logger: logger)
        } catch {
            journal.close()
            throw GatewayError("cannot open the destinations: \(error)")
        }
        delivery.resume(from: journal.recoveredRecords)
        journal.releaseRecoveredRecords()
        let processor: NotificationProcessor
        do {
            processor = NotificationProcessor(
                verifier: try Self.makeVerifier(configuration, clock: clock),
                policy: AcceptancePolicy(configuration), routes: configuration.routes)
        } catch {
            delivery.stop {}
            journal.close()
            throw error
        }
        intake = NotificationIntake(processor: processor, journal: journal, delivery: delivery, clock: clock, logger: logger)

        var serverConfiguration = HTTPServerConfiguration(address: configuration.listen.description)
        serverConfiguration.maxBodyBytes = configuration.maxBodySize
        serverConfiguration.readTimeout = configuration.readTimeout
        serverConfiguration.idleTimeout = configuration.idleTimeout
        serverConfiguration.tls = publicTLS
        publicServer = HTTPServer(
            configuration: serverConfiguration, logger: logger,
            handler: Self.publicRoutes(configuration: configuration, intake: intake, journal: journal).handler)
        let port: Int
        do {
            port = try publicServer.start()
        } catch {
            delivery.stop {}
            journal.close()
            throw GatewayError("cannot listen on \(configuration.listen): \(error)")
        }
        logger.info("listening", [
            ("listener", "public"), ("address", Self.address(configuration.listen, port: port)),
            ("paths", configuration.paths.map(\.path).joined(separator: " ")),
            ("tls", publicTLS == nil ? "no" : "yes"),
        ])
        logger.info("started", [
            ("data", configuration.dataDirectory), ("routes", String(configuration.routes.rules.count)),
            ("destinations", String(configuration.destinations.count)),
            ("journal.segments", String(journal.segments.count)),
        ])
    }

    /// The public listener's port (useful when configured with port 0).
    public var publicPort: Int? { publicServer.port }

    /// Stops accepting, answers what is in flight, flushes the journal, then calls `completion`.
    public func stop(completion: @escaping @Sendable () -> Void) {
        let alreadyStopping = stopping.withLock { stopping in
            defer { stopping = true }
            return stopping
        }
        guard !alreadyStopping else { return }
        logger.info("stopping")
        publicServer.shutdown { [delivery, journal, logger] in
            delivery.stop {
                journal.close {
                    logger.info("stopped")
                    completion()
                }
            }
        }
    }

    private static func address(_ listen: ListenAddress, port: Int) -> String {
        listen.kind == .ipv6 ? "[\(listen.host)]:\(port)" : "\(listen.host):\(port)"
    }
}

/// Why the gateway could not start, as one sentence.
public struct GatewayError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
