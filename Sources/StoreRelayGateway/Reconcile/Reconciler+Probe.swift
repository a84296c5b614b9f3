import Dispatch
import StoreRelayAppStoreAPI
import StoreRelayConfig
import StoreRelayCore

extension Reconciler {
    /// Proves the whole pipe (SPEC `storerelay probe`): asks Apple for a TEST notification,
    /// then polls Apple's status for it — at most once a second, Apple's rate limit — until
    /// the notification Apple shows is in this gateway's journal, or `timeout` passes.
    /// Probes have a line of their own: a long reconciliation does not hold them up.
    func probe(timeout: Duration, completion: @escaping @Sendable (ProbeReport) -> Void) {
        record.probes.enqueue { [self] done in
            runProbe(timeout: timeout) { [self] report in
                record.lastProbe.withLock { $0 = report }
                var fields: Logger.Metadata = [("outcome", report.outcome.rawValue)]
                if let roundTrip = report.roundTripMilliseconds { fields.append(("round.trip.ms", roundTrip)) }
                if let error = report.error { fields.append(("error", error)) }
                logger.info("probe finished", tagged(fields))
                if report.outcome != .arrived {
                    var details: [(String, JSONValue)] = [
                        ("app", .string(bundleId)), ("environment", .string(environment.rawValue)),
                        ("outcome", .string(report.outcome.rawValue)),
                    ]
                    if let error = report.error { details.append(("error", .string(error))) }
                    operational.emit("probe.failed", details)
                }
                completion(report)
                done()
            }
        }
    }

    private func runProbe(timeout: Duration, completion: @escaping @Sendable (ProbeReport) -> Void) {
        let started = clock.now()
        let probe = ProbeRun(started: started, timeout: timeout,
                             // Every call to Apple, its retries included, ends by the deadline.
                             deadline: started.milliseconds + timeout.wholeMilliseconds)
        api.requestTestNotification(deadline: probe.deadline) { [self] result in
            switch result {
            case .success(let token):
                poll(token, probe, ProbeReport(startedAt: started), completion: completion)
            case .failure(let error):
                var report = ProbeReport(startedAt: started)
                report.error = "App Store Server API: \(error.message)"
                completion(report)
            }
        }
    }

    /// When a probe started and when it gives up.
    private struct ProbeRun: Sendable {
        let started: Timestamp
        let timeout: Duration
        let deadline: Int64
    }

    /// Asks Apple how its TEST notification went and looks for it in this gateway; again a
    /// second later, until it is here, Apple refuses, or the deadline comes.
    private func poll(_ token: String, _ probe: ProbeRun, _ report: ProbeReport, completion: @escaping @Sendable (ProbeReport) -> Void) {
        api.testNotificationStatus(token: token, deadline: probe.deadline) { [self] result in
            var report = report
            switch result {
            case .success(let status):
                report.attempts = status.sendAttempts.map { ($0.attemptDate, $0.result) }
                if let payload = status.signedPayload, let uuid = Self.notificationUUID(payload) {
                    report.notificationUUID = uuid
                    let seen = report
                    return store.contains(id: uuid) { [self] found in
                        guard found == true else { return pollAgain(token, probe, seen, completion: completion) }
                        var arrived = seen
                        arrived.outcome = .arrived
                        arrived.roundTripMilliseconds = clock.now().milliseconds - probe.started.milliseconds
                        completion(arrived)
                    }
                }
            case .failure(let error) where error.errorCode == AppStoreAPIError.Code.testNotificationNotFound:
                break  // Apple has not sent it yet.
            case .failure(let error):
                report.error = "App Store Server API: \(error.message)"
                return completion(report)
            }
            pollAgain(token, probe, report, completion: completion)
        }
    }

    private func pollAgain(_ token: String, _ probe: ProbeRun, _ report: ProbeReport, completion: @escaping @Sendable (ProbeReport) -> Void) {
        guard clock.now().milliseconds + 1000 <= probe.deadline else {
            var report = report
            report.outcome = .timeout
            report.error = "the TEST notification did not arrive within \(ConfigFormat.duration(probe.timeout))"
            return completion(report)
        }
        record.probeQueue.asyncAfter(deadline: .now() + .seconds(1)) { [self] in
            poll(token, probe, report, completion: completion)
        }
    }

    /// The `notificationUUID` of a JWS, read without verifying it: only to look the id up
    /// in our own journal, whose copy was verified when it arrived.
    static func notificationUUID(_ jws: String) -> String? {
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let bytes = Base64.urlDecode(parts[1]), let payload = try? JSONValue.parse(bytes) else { return nil }
        return payload["notificationUUID"]?.stringValue
    }
}
