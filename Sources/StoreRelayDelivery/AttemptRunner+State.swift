import StoreRelayConfig
import StoreRelayCore

extension AttemptRunner {
    /// The runner's bookkeeping as a pure state machine with injected time: the circuit
    /// breaker, the attempts in flight, the last success and error, and the rules that turn
    /// an attempt's outcome into a verdict (SPEC "Delivery to webhooks", retries). No I/O:
    /// tested directly.
    struct State: Sendable {
        let limits: DeliveryLimits
        let concurrency: Int
        private(set) var breaker: CircuitBreaker
        /// Jobs holding one of the `concurrency` slots (attempts, or cluster entries being
        /// attempted and settled).
        private(set) var inFlight = 0
        private(set) var lastSuccess: Timestamp?
        private(set) var lastError: (message: String, at: Timestamp)?

        init(limits: DeliveryLimits, concurrency: Int) {
            self.limits = limits
            self.concurrency = concurrency
            breaker = CircuitBreaker(threshold: 5, cooldown: limits.schedule)
        }

        /// Slots free for more jobs.
        var room: Int { concurrency - inFlight }

        mutating func take(_ count: Int = 1) { inFlight += count }
        mutating func release(_ count: Int = 1) { inFlight = max(0, inFlight - count) }

        /// Whether the breaker lets an attempt start at `now` (half-open: only the probe).
        mutating func allowsAttempt(at now: Timestamp) -> Bool { breaker.allowsAttempt(at: now) }

        /// The probe allowed did not go out after all.
        mutating func cancelProbe() { breaker.cancelProbe() }

        /// `max-age` ends here for `job` (from acceptance, or the replay that gave a fresh budget).
        func expiry(of job: DeliveryJob) -> Timestamp { job.budgetStart.advanced(by: limits.maxAge) }

        /// The verdict on a job whose `max-age` passed before its next attempt could start;
        /// nil while it may still be attempted.
        func expired(_ job: DeliveryJob, now: Timestamp) -> AttemptVerdict? {
            guard now >= expiry(of: job) else { return nil }
            var job = job
            job.due = now
            return .deadLetter(job, .exhausted, detail: "max-age \(ConfigFormat.duration(limits.maxAge)) passed before the event could be delivered")
        }

        /// Records `outcome` of `job`'s latest attempt at `now` and says what follows, with the
        /// `outcome` label of `storerelay_deliveries_total` (a failure that spent the budget is
        /// `exhausted`).
        mutating func settle(_ job: DeliveryJob, _ outcome: AttemptOutcome, now: Timestamp) -> (AttemptVerdict, label: String) {
            var job = job
            job.attempts.append(outcome.attempt)
            switch outcome {
            case .delivered:
                breaker.recordSuccess()
                lastSuccess = now
                return (.delivered(job), outcome.metricLabel)
            case .reject(let attempt):
                // An answer proves the destination is up, whatever it said.
                breaker.recordAnswer()
                lastError = (attempt.error ?? "rejected", now)
                // A bus has no HTTP status: its refusal (a nack, a return, an error reply) is the
                // attempt's error.
                let detail = attempt.status.map { "the destination answered HTTP \($0), which is not retried" }
                    ?? "the destination refused the message (\(attempt.error ?? "no reason given")), which is not retried"
                return (.deadLetter(job, .rejected, detail: detail), outcome.metricLabel)
            case .unsendable(let attempt):
                // Nothing reached the destination: the breaker hears nothing of it.
                lastError = (attempt.error ?? "unsendable", now)
                return (.deadLetter(job, .rejected, detail: attempt.error ?? "the event cannot be sent to this destination"),
                        outcome.metricLabel)
            case .retry(let attempt, let retryAfter):
                breaker.recordFailure(at: now)
                lastError = (attempt.error ?? "failed", now)
                return retry(job, attempt, after: retryAfter, now: now)
            }
        }

        /// The next attempt's due time (backoff, and no sooner than `Retry-After`), unless the
        /// budget is spent first.
        private func retry(_ job: DeliveryJob, _ attempt: DeliveryAttempt, after retryAfter: Duration?,
                           now: Timestamp) -> (AttemptVerdict, label: String) {
            guard job.attemptsInBudget < limits.maxAttempts else {
                return (.deadLetter(job, .exhausted, detail: "gave up after \(job.attemptsInBudget) attempts (max-attempts \(limits.maxAttempts))"),
                        "exhausted")
            }
            var job = job
            let backoff = limits.schedule.delay(afterFailures: job.attemptsInBudget)
            job.due = now.advanced(by: max(backoff, retryAfter ?? .zero))
            guard job.due < expiry(of: job) else {
                return (.deadLetter(job, .exhausted, detail: "max-age \(ConfigFormat.duration(limits.maxAge)) would pass before the next attempt"),
                        "exhausted")
            }
            return (.retry(job, attempt), "retry")
        }

        /// What status pages show of this destination, with what waits in its owner's queue.
        func status(name: String, kind: String, queueDepth: Int, parked: Int) -> DestinationStatus {
            DestinationStatus(name: name, kind: kind, queueDepth: queueDepth, parked: parked, inFlight: inFlight,
                              breaker: breaker.state, lastSuccess: lastSuccess, lastError: lastError?.message,
                              lastErrorAt: lastError?.at)
        }
    }
}
