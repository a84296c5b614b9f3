import StoreRelayAppStoreAPI
import StoreRelayConfig
import StoreRelayNet
import StoreRelayStorage
import StoreRelayCore

/// Every app and environment the configuration lets the gateway ask Apple about: one
/// `Reconciler` for each app with an `api-key`, for production and sandbox when accepted.
/// A reload replaces the reconcilers; checkpoints live on disk, and each app and environment's
/// queue and last outcomes (`ReconcileRecord`) carry over to its new reconciler.
final class Reconcilers: Sendable {
    private let all = Locked<[Reconciler]>([])
    private let records = Locked<[String: ReconcileRecord]>([:])
    private let http = HTTPClient()
    private let intake: NotificationIntake
    private let store: any NotificationStore
    private let clock: any TimeSource
    private let logger: Logger
    private let metrics: GatewayMetrics
    private let operational: OperationalEvents
    private let directory: String

    init(dataDirectory: String, intake: NotificationIntake, store: any NotificationStore, clock: any TimeSource, logger: Logger,
         metrics: GatewayMetrics, operational: OperationalEvents = OperationalEvents()) {
        self.operational = operational
        directory = dataDirectory + "/reconcile"
        self.intake = intake
        self.store = store
        self.clock = clock
        self.logger = logger
        self.metrics = metrics
        metrics.observe { [all] in all.current }
    }

    var current: [Reconciler] { all.current }

    func find(bundleId: String, environment: AppStoreEnvironment) -> Reconciler? {
        all.current.first { $0.bundleId == bundleId && $0.environment == environment }
    }

    /// Builds the reconcilers `configuration` asks for; throws (and keeps the running ones)
    /// when a key file cannot be used, so a start or reload with a bad key fails loudly.
    func prepare(_ configuration: GatewayConfiguration, dedupeWindow: Duration) throws(GatewayError) -> [Reconciler] {
        var made: [Reconciler] = []
        let environments = configuration.environments.filter { $0 == .production || $0 == .sandbox }
        for app in configuration.apps {
            guard let key = app.apiKey else { continue }
            let credentials: APICredentials
            do {
                credentials = try APICredentials.load(keyFile: key.path, keyId: key.keyId, issuerId: key.issuerId, bundleId: app.bundleId)
            } catch {
                throw GatewayError("app \(app.bundleId): \(error.message)")
            }
            for environment in environments {
                let key = app.bundleId + "\n" + environment.rawValue
                let record = records.withLock { records in
                    if let existing = records[key] { return existing }
                    let made = ReconcileRecord(bundleId: app.bundleId, environment: environment)
                    records[key] = made
                    return made
                }
                let api: AppStoreServerAPI
                do {
                    api = try AppStoreServerAPI(credentials: credentials, environment: environment, baseURL: configuration.appleAPI?.url,
                                                caFile: configuration.appleAPI?.caFile, http: http, clock: clock)
                } catch {
                    throw GatewayError("app \(app.bundleId): \(error.message)")
                }
                metrics.seedReconciliation(app: app.bundleId, environment: environment.rawValue)
                made.append(Reconciler(
                    bundleId: app.bundleId, environment: environment, api: api, schedule: app.reconcile, record: record,
                    directory: directory,
                    intake: intake, store: store, dedupeWindow: dedupeWindow, clock: clock, logger: logger, metrics: metrics,
                    operational: operational))
            }
        }
        if !made.isEmpty {
            do {
                try PrivateFiles.createDirectory(directory)
            } catch {
                throw GatewayError("cannot create \(directory): \(error)")
            }
        }
        return made
    }

    /// Stops the running reconcilers and starts `replacements`: with a pass at once when the
    /// gateway starts (`passNow`), one interval on after a reload.
    func replace(with replacements: [Reconciler], passNow: Bool) {
        let old = all.withLock { all in
            defer { all = replacements }
            return all
        }
        for reconciler in old { reconciler.stop() }
        for reconciler in replacements { reconciler.start(passNow: passNow) }
    }

    func stop() {
        replace(with: [], passNow: false)
        http.shutdown()
    }
}
