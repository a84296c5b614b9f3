import Foundation
import StoreRelayConfig
import StoreRelayCore

/// Finds and loads the configuration the way every command does: `--config FILE`, else
/// `$STORERELAY_CONFIG`, else `./routes.conf` when it exists, else the embedded default.
enum ConfigurationLoader {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    static func load(option: String?) throws(Failure) -> GatewayConfiguration {
        let environment = ProcessInfo.processInfo.environment
        let explicit = option ?? environment["STORERELAY_CONFIG"].flatMap { $0.isEmpty ? nil : $0 }
        let path: String
        if let explicit {
            guard PrivateFiles.exists(explicit) else {
                throw Failure(description: "configuration file \(explicit) does not exist")
            }
            path = explicit
        } else if PrivateFiles.exists("routes.conf") {
            path = "routes.conf"
        } else {
            return DefaultConfiguration.configuration()
        }
        do {
            return try GatewayConfiguration.load(path: path, environment: environment)
        } catch {
            throw Failure(description: error.description)
        }
    }
}
