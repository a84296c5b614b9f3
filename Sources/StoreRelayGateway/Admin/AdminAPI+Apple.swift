import StoreRelayNet
import StoreRelayCore

/// `POST /api/reconcile` and `POST /api/probe`: what `storerelay reconcile` and `storerelay
/// probe` ask the running gateway, which owns the journal and the App Store Server API keys.
extension AdminAPI {
    /// Body `{"app":..,"environment":"production"|"sandbox","since":"48h","onlyFailures":false,
    /// "dryRun":false}` (`since` optional: from the checkpoint); answers the pass's report.
    func reconcile(body: [UInt8], completion: @escaping @Sendable (HTTPResponse) -> Void) {
        let target: Target
        do {
            target = try Target(body, example: #"{"app":"com.acme.journal","environment":"production","since":"48h"}"#)
        } catch {
            return completion(error.response)
        }
        var since: Duration?
        if let text = target.json["since"]?.stringValue {
            guard let duration = Duration(compact: text), duration > .zero else {
                return completion(.error(.badRequest, message: "since must be a duration such as 48h or 7d, not '\(text.prefix(40))'."))
            }
            since = duration
        }
        let onlyFailures = target.json["onlyFailures"]?.boolValue ?? false
        let dryRun = target.json["dryRun"]?.boolValue ?? false
        backend.reconcile(app: target.app, environment: target.environment, since: since, onlyFailures: onlyFailures,
                          dryRun: dryRun) { report in
            completion(report.map { .json($0.serialized()) } ?? Self.notReconciled(target.app, target.environment))
        }
    }

    /// Body `{"app":..,"environment":..,"timeout":"60s"}` (timeout optional, 60s, at most
    /// 10m); answers the probe's report.
    func probe(body: [UInt8], completion: @escaping @Sendable (HTTPResponse) -> Void) {
        let target: Target
        do {
            target = try Target(body, example: #"{"app":"com.acme.journal","environment":"sandbox","timeout":"60s"}"#)
        } catch {
            return completion(error.response)
        }
        var timeout = Duration.seconds(60)
        if let text = target.json["timeout"]?.stringValue {
            guard let duration = Duration(compact: text), duration >= .seconds(1), duration <= .seconds(600) else {
                return completion(.error(.badRequest, message: "timeout must be a duration from 1s to 10m, such as 60s, not '\(text.prefix(40))'."))
            }
            timeout = duration
        }
        backend.probe(app: target.app, environment: target.environment, timeout: timeout) { report in
            completion(report.map { .json($0.serialized()) } ?? Self.notReconciled(target.app, target.environment))
        }
    }

    private static func notReconciled(_ app: String, _ environment: AppStoreEnvironment) -> HTTPResponse {
        .error(.notFound, message: "App \(app.prefix(100)) is not set up for the App Store Server API in \(environment.rawValue): "
            + "give it an api-key line and accept that environment.")
    }
}

/// The app and environment a reconcile or probe request names, and its whole body.
private struct Target {
    let app: String
    let environment: AppStoreEnvironment
    let json: JSONValue

    init(_ body: [UInt8], example: String) throws(Refusal) {
        guard let json = try? JSONValue.parse(body), json.objectValue != nil,
              let app = json["app"]?.stringValue, !app.isEmpty,
              let name = json["environment"]?.stringValue
        else { throw Refusal(response: .error(.badRequest, message: "The body must be a JSON object such as \(example).")) }
        guard let environment = AppStoreEnvironment(appleName: name), environment == .production || environment == .sandbox else {
            throw Refusal(response: .error(.badRequest, message: "environment must be production or sandbox, not '\(name.prefix(40))'."))
        }
        self.app = app
        self.environment = environment
        self.json = json
    }

    struct Refusal: Error {
        let response: HTTPResponse
    }
}
