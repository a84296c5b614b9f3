import StoreRelayConfig
import StoreRelaySimulator
import StoreRelayCore

/// Creates the dev CA of `storerelay simulate` when a `trust-root` line names it for
/// non-production environments only (`trust-root ./data/dev-ca/root.pem sandbox`, as the
/// embedded default does) and it does not exist yet, so a first run — `serve`, then
/// `simulate` — reaches 200 without editing a file. Production is never vouched for by it.
enum DevCAProvisioning {
    static func provision(_ configuration: GatewayConfiguration, logger: Logger) throws(SimulatorError) {
        guard configuration.trustRoots.contains(where: { $0.isProvisionedDevCA(dataDirectory: configuration.dataDirectory) })
        else { return }
        let authority = try DevCertificateAuthority.loadOrCreate(dataDirectory: configuration.dataDirectory)
        if authority.wasCreated {
            logger.notice("created the dev CA of `storerelay simulate`; trust-root names it for non-production environments only",
                          [("directory", authority.directory)])
        }
    }
}
