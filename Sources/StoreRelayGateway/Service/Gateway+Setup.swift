import Foundation
import StoreRelayVerification
import StoreRelayConfig
import StoreRelayNet
import StoreRelayStorage
import StoreRelayCore

extension AcceptancePolicy {
    init(_ configuration: GatewayConfiguration, dedupeWindow: Duration? = nil) {
        var apps: [String: DeclaredApp] = [:]
        for app in configuration.apps {
            apps[app.bundleId] = DeclaredApp(appleId: app.appleId.map { Int64($0) }, sharedSecret: app.sharedSecret?.value)
        }
        self.init(
            acceptedEnvironments: Set(configuration.environments),
            apps: apps,
            primarySharedSecret: configuration.sharedSecret?.value,
            dedupeWindow: dedupeWindow ?? configuration.dedupeWindow)
    }
}

extension Gateway {
    /// The verifier for `configuration`: Apple Root CA - G3 plus every `trust-root` file, for
    /// the environments it names.
    /// Xcode and LocalTesting data is signed by no Apple chain; like Apple's libraries, it is
    /// accepted unverified only when the configuration opts in to those environments.
    static func makeVerifier(_ configuration: GatewayConfiguration, clock: any TimeSource) throws(GatewayError) -> NotificationVerifier {
        var roots = [AppleRootCertificates.appleRootCAG3]
        var environmentRoots: [AppStoreEnvironment: [Certificate]] = [:]
        for trustRoot in configuration.trustRoots {
            let path = trustRoot.path
            // The simulator's dev CA, not created yet (`serve` creates it; `verify` may run
            // before it exists): a CA that does not exist has signed nothing to trust.
            if trustRoot.isProvisionedDevCA(dataDirectory: configuration.dataDirectory),
               !FileManager.default.fileExists(atPath: path) { continue }
            guard let pem = try? String(contentsOfFile: path, encoding: .utf8) else {
                throw GatewayError("cannot read trust-root \(path)")
            }
            do {
                let certificates = try Certificate.pemBundle(pem)
                guard !certificates.isEmpty else { throw GatewayError("trust-root \(path) holds no certificate") }
                if let environments = trustRoot.environments {
                    for environment in environments { environmentRoots[environment, default: []] += certificates }
                } else {
                    roots += certificates
                }
            } catch let error as GatewayError {
                throw error
            } catch {
                throw GatewayError("trust-root \(path) is not a PEM certificate: \(error)")
            }
        }
        let unverified = Set(configuration.environments).intersection([.xcode, .localtesting])
        do {
            return try NotificationVerifier(configuration: VerifierConfiguration(
                trustedRoots: roots, environmentRoots: environmentRoots, clock: clock, unverifiedEnvironments: unverified))
        } catch {
            throw GatewayError("cannot set up verification: \(error)")
        }
    }

    /// The public listener's TLS certificate and key (`tls CERT KEY`), or nil for plain HTTP.
    /// A missing, unreadable or mismatched file is a start-up error naming that file.
    static func loadTLS(_ configuration: GatewayConfiguration) throws(GatewayError) -> HTTPServerTLS? {
        guard let files = configuration.tls else { return nil }
        do {
            return try HTTPServerTLS(certificateChainFile: files.certificateFile, privateKeyFile: files.privateKeyFile)
        } catch {
            throw GatewayError("cannot set up TLS on the public listener: \(error)")
        }
    }

    /// The public listener's routes: POST on every notification path (Apple's, and Google
    /// Play's `play` paths), health and readiness.
    static func publicRoutes(
        configuration: GatewayConfiguration, intake: NotificationIntake, play: PlayIntake, store: any NotificationStore,
        stopping: Locked<Bool>
    ) -> HTTPRoutes {
        var router = HTTPRouter()
        for binding in configuration.paths where binding.kind == .googlePlay {
            router.post(binding.path) { request, responder in
                play.receive(request: request) { outcome in
                    _ = responder.respond(outcome.response)
                }
            }
        }
        for binding in configuration.paths where binding.kind == .appStore {
            router.post(binding.path) { request, responder in
                intake.receive(body: request.body, pathEnvironment: binding.environment, client: request.remoteAddress) { outcome in
                    _ = responder.respond(outcome.response)
                }
            }
        }
        router.get("/healthz") { _, responder in
            _ = responder.respond(.json(#"{"status":"ok"}"#))
        }
        router.get("/readyz") { _, responder in
            if stopping.current {
                _ = responder.respond(.error(.unavailable, message: "The gateway is stopping; send to another instance."))
            } else if store.isWritable {
                _ = responder.respond(.json(#"{"status":"ready"}"#))
            } else {
                _ = responder.respond(.error(.unavailable, message: store.notWritableMessage))
            }
        }
        return router.freeze()
    }
}
