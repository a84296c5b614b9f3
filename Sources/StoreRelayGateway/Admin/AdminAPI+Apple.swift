import StoreRelayNet
import StoreRelayCore

/// `POST /api/reconcile` and `POST /api/probe`: what `storerelay reconcile` and `storerelay
/// probe` ask the running gateway, which owns the journal and the App Store Server API keys.
extension AdminAPI {
    /// Body `{"app":..,"environment":"production"|"sandbox","since":"48h","onlyFailures":false,
    /// "dryRun":false}` (`since` optional: from the checkpoint); answers the pass's report.
    func reconcile(body: [UInt8], completion: @escaping @Sendable (HTTPResponse) -> Void) {
        do throws(Target.Refusal) {
            let target = try Target(body, example: #"{"app":"com.acme.journal","environment":"production","since":"48h"}"#)
            let since = try target.duration("since", "a duration such as 48h or 7d") { $0 > .zero }
            let onlyFailures = target.json["onlyFailures"]?.boolValue ?? false
            let dryRun = target.json["dryRun"]?.boolValue ?? false
            backend.reconcile(app: target.app, environment: target.environment, since: since, onlyFailures: onlyFailures,
                              dryRun: dryRun) { completion(Self.answer($0, target)) }
        } catch {
            completion(error.response)
        }
    }

    /// Body `{"app":..,"environment":..,"timeout":"60s"}` (timeout optional, 60s, at most
    /// 10m); answers the probe's report.
    func probe(body: [UInt8], completion: @escaping @Sendable (HTTPResponse) -> Void) {
        do throws(Target.Refusal) {
            let target = try Target(body, example: #"{"app":"com.acme.journal","environment":"sandbox","timeout":"60s"}"#)
            let timeout = try target.duration("timeout", "a duration from 1s to 10m, such as 60s") {
                $0 >= .seconds(1) && $0 <= .seconds(600)
            } ?? .seconds(60)
            backend.probe(app: target.app, environment: target.environment, timeout: timeout) { completion(Self.answer($0, target)) }
        } catch {
            completion(error.response)
        }
    }

    /// The report as the answer, or 404 when the app and environment are not set up.
    private static func answer(_ report: JSONValue?, _ target: Target) -> HTTPResponse {
        report.map { .json($0.serialized()) } ?? notReconciled(target.app, target.environment)
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

    /// The body's duration `key`, when given; 400 naming `expected` when it is not one
    /// `accepts` takes.
    func duration(_ key: String, _ expected: String, accepts: (Duration) -> Bool) throws(Refusal) -> Duration? {
        guard let text = json[key]?.stringValue else { return nil }
        guard let duration = Duration(compact: text), accepts(duration) else {
            throw Refusal(response: .error(.badRequest, message: "\(key) must be \(expected), not '\(text.prefix(40))'."))
        }
        return duration
    }

    struct Refusal: Error {
        let response: HTTPResponse
    }
}
