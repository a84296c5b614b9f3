import Dispatch
import StoreRelayCore

/// When each accepted app and environment last received a notification, and whether it has
/// gone silent: nothing for `intake-silence` (SPEC `intake.silent` / `intake.resumed`). It
/// also feeds `storerelay_last_received_timestamp_seconds`.
///
/// Only a pair heard from since the start is watched: a gateway cannot tell a silent app from
/// one that never sends to it, and the last received time before a restart is not kept (the
/// metric's history in Prometheus keeps it; the alert rule `StoreRelayIntakeSilent` covers a
/// pair whose series stopped).
final class IntakeSilenceWatch: Sendable {
    struct Pair: Hashable, Sendable {
        var app: String
        var environment: String
    }

    private struct Heard: Sendable {
        var last: Timestamp
        var silent = false
    }

    private let heard = Locked<[Pair: Heard]>([:])
    private let clock: any TimeSource
    private let events: OperationalEvents
    private let silence = Locked<Duration>(.seconds(6 * 3600))
    private let timer = RepeatingTimer()
    private let queue = DispatchQueue(label: "storerelay.intake-silence")

    init(clock: any TimeSource, events: OperationalEvents) {
        self.clock = clock
        self.events = events
    }

    /// Checks every `interval` (a tenth of the silence, at most a minute, so a silence is told
    /// within a tenth of its length) from now on.
    func start(silence: Duration, interval: Duration? = nil) {
        self.silence.withLock { $0 = silence }
        let every = interval ?? min(.seconds(60), silence / 10)
        timer.start(after: every, every: every, leeway: .milliseconds(50), on: queue) { [weak self] in self?.check() }
    }

    func stop() { timer.stop() }

    /// An accepted notification of `app` in `environment`, now.
    func received(app: String, environment: String) {
        let pair = Pair(app: app, environment: environment)
        let now = clock.now()
        let resumed = heard.withLock { heard -> Heard? in
            let before = heard[pair]
            heard[pair] = Heard(last: now)
            return before?.silent == true ? before : nil
        }
        if let resumed {
            events.emit("intake.resumed", [
                ("app", .string(app)), ("environment", .string(environment)), ("silentSince", .string(resumed.last.iso8601)),
            ])
        }
    }

    /// Each pair's last received time, for the metric.
    var lastReceived: [(Pair, Timestamp)] { heard.current.map { ($0.key, $0.value.last) } }

    /// Reports each pair that has been silent for the window, once until it is heard again.
    func check() {
        let now = clock.now()
        let window = silence.current
        let silent = heard.withLock { heard -> [(Pair, Timestamp)] in
            var found: [(Pair, Timestamp)] = []
            for (pair, state) in heard where !state.silent && now.milliseconds - state.last.milliseconds >= window.wholeMilliseconds {
                heard[pair]?.silent = true
                found.append((pair, state.last))
            }
            return found.sorted { ($0.0.app, $0.0.environment) < ($1.0.app, $1.0.environment) }
        }
        for (pair, last) in silent {
            events.emit("intake.silent", [
                ("app", .string(pair.app)), ("environment", .string(pair.environment)),
                ("lastReceivedAt", .string(last.iso8601)), ("silenceSeconds", .integer(window.wholeMilliseconds / 1000)),
            ])
        }
    }
}
