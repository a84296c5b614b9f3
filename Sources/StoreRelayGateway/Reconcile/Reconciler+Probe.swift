import Dispatch
import StoreRelayAppStoreAPI
import StoreRelayConfig
import StoreRelayCore

extension Reconciler {
    /// Proves the whole pipe (SPEC `storerelay probe`): asks Apple for a TEST notification,
    /// then polls Apple's status for it — at most once a second, Apple's rate limit — until
    /// the notification Apple shows is in this gateway's journal, or `timeout` passes.
    /// Runs on its own queue: a long reconciliation does not hold it up.
    func probe(timeout: Duration, completion: @escaping @Sendable (ProbeReport) -> Void) {
        record.probeQueue.async { [self] in
            let report = runProbe(timeout: timeout)
            record.lastProbe.withLock { $0 = report }
            var fields: Logger.Metadata = [("outcome", report.outcome.rawValue)]
            if let roundTrip = report.roundTripMilliseconds { fields.append(("round.trip.ms", String(roundTrip))) }
            if let error = report.error { fields.append(("error", error)) }
            logger.info("probe finished", tagged(fields))
            completion(report)
        }
    }

    private func runProbe(timeout: Duration) -> ProbeReport {
        let started = clock.now()
        var report = ProbeReport(startedAt: started)
        // Every call to Apple, its retries included, ends by the deadline.
        let deadline = started.milliseconds + timeout.wholeMilliseconds
        let token: String
        do {
            token = try api.requestTestNotification(deadline: deadline)
        } catch {
            report.error = "App Store Server API: \(error.message)"
            return report
        }
        while true {
            do {
                let status = try api.testNotificationStatus(token: token, deadline: deadline)
                report.attempts = status.sendAttempts.map { ($0.attemptDate, $0.result) }
                if let payload = status.signedPayload, let uuid = Self.notificationUUID(payload) {
                    report.notificationUUID = uuid
                    if store.containsNow(id: uuid) {
                        report.outcome = .arrived
                        report.roundTripMilliseconds = clock.now().milliseconds - started.milliseconds
                        return report
                    }
                }
            } catch where error.errorCode == AppStoreAPIError.Code.testNotificationNotFound {
                // Apple has not sent it yet.
            } catch {
                report.error = "App Store Server API: \(error.message)"
                return report
            }
            guard clock.now().milliseconds + 1000 <= deadline else {
                report.outcome = .timeout
                report.error = "the TEST notification did not arrive within \(ConfigFormat.duration(timeout))"
                return report
            }
            Thread.sleepBriefly(milliseconds: 1000)
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

private enum Thread {
    static func sleepBriefly(milliseconds: Int) {
        _ = DispatchSemaphore(value: 0).wait(timeout: .now() + .milliseconds(milliseconds))
    }
}
