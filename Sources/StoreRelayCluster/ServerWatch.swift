import Dispatch
import StoreRelayNet
import StoreRelayCore

/// Keeps watching the cluster server while connected (docs/SPEC.md "Cluster mode"): a PING
/// (in a Redis Cluster, a read of the slot, which follows it) every `probeInterval`, so
/// `/readyz` fails within about a second of the server going silent, not after a command
/// times out; and the durability settings every
/// `durabilityInterval`, so a live `CONFIG SET appendfsync everysec` (or an evicting
/// `maxmemory-policy`) stops the 200s within that period, and they resume when it is set back.
/// A verdict counts for `verdictLimit` (3 intervals): when checks stop coming (the watch
/// cannot connect, its `CONFIG GET` fails or times out) the 200s stop too, rather than go on
/// on the strength of the last verdict.
///
/// It runs on a connection of its own: the main one carries `WAITAOF`, which holds back every
/// reply behind it for up to `wait-timeout`, and a probe stuck there would look like silence.
/// Nothing blocks: a timer sends, completions record.
public final class ServerWatch: Sendable {
    public static let probeInterval: Duration = .milliseconds(200)
    /// A probe unanswered this long: silent. With the interval, at most ~0.9 s after the
    /// server stops answering.
    public static let silenceLimit: Duration = .milliseconds(700)
    public static let durabilityInterval: Duration = .seconds(2)
    /// A durability verdict older than this many intervals vouches for nothing.
    public static let verdictIntervals = 3

    private let client: RedisClient
    private let durability: ServerDurability
    private let logger: Logger
    private let origin: String
    private let durabilityInterval: Duration
    private let probeInterval: Duration
    private let state: Locked<ServerWatchState>
    private let timer = RepeatingTimer()
    /// When the durability was last asked (monotonic ns); touched only on `queue`.
    private let lastDurabilityCheck = Locked<UInt64?>(nil)
    private let queue = DispatchQueue(label: "storerelay.cluster.watch", target: .deliveryWork)

    /// - Parameter server: the main connection's configuration; the watch's own connection
    ///   copies its address, credentials and TLS, without its connection checks (the watch
    ///   makes its own, and reports rather than refuses).
    public init(server: RedisConfiguration, durability: ServerDurability, logger: Logger,
                probeInterval: Duration = ServerWatch.probeInterval, silenceLimit: Duration = ServerWatch.silenceLimit,
                durabilityInterval: Duration = ServerWatch.durabilityInterval) {
        var configuration = server
        configuration.clientName = server.clientName.map { $0 + "-watch" }
        configuration.connectionChecks = []
        configuration.acceptConnection = nil
        // A silent server closes this connection after a few probes; back soon after it answers.
        configuration.connectTimeout = min(server.connectTimeout, .seconds(2))
        configuration.commandTimeout = min(server.commandTimeout, .seconds(2))
        configuration.reconnectMaximum = min(server.reconnectMaximum, .seconds(1))
        configuration.logger = .disabled
        client = RedisClient(configuration: configuration)
        self.durability = durability
        self.logger = logger
        origin = server.topology.describe(server.url)
        self.probeInterval = probeInterval
        self.durabilityInterval = durabilityInterval
        let verdictLimit = durability.isChecked
            ? UInt64(max(1, durabilityInterval.wholeMilliseconds)) * 1_000_000 * UInt64(Self.verdictIntervals) : .max
        state = Locked(ServerWatchState(silenceLimit: UInt64(max(1, silenceLimit.wholeMilliseconds)) * 1_000_000,
                                        verdictLimit: verdictLimit))
        // Nothing checked, nothing to wait for.
        if !durability.isChecked { _ = state.withLock { $0.durabilityChecked(nil, at: MonotonicClock.nanoseconds()) } }
    }

    public func start() {
        client.observeConnection { [weak self] connected, _ in
            guard let self else { return }
            state.withLock { connected ? $0.connected() : $0.disconnected() }
            // A new connection may reach a server that changed meanwhile: ask at once.
            if connected { queue.async { self.checkDurability() } }
        }
        client.start()
        timer.start(every: probeInterval, leeway: .milliseconds(20), on: queue) { [weak self] in self?.tick() }
    }

    public func stop() {
        timer.stop()
        client.shutdown()
    }

    /// Whether the watch is connected and the server answered its last probe in time.
    public var isAnswering: Bool {
        !state.withLock { $0.isSilent(at: MonotonicClock.nanoseconds()) }
    }

    /// Why the last durability check refused the server (one sentence naming the setting),
    /// or nil while it is durable (or not yet asked).
    public var durabilityRefusal: String? { state.current.durabilityRefusal }

    /// Why nothing may be acknowledged now as far as durability goes: the last check's
    /// refusal, or no verdict within `verdictIntervals` intervals (none yet included); nil
    /// while a recent one vouches for the server. Acceptance asks this before every script.
    public var acceptanceRefusal: String? {
        let now = MonotonicClock.nanoseconds()
        return state.withLock { $0.acceptanceRefusal(at: now) }
    }

    /// The main connection passed its connection checks (the same durability settings) just
    /// now: a verdict as good as the watch's own, so a start does not wait for the watch.
    public func connectionChecked() {
        guard durability.isChecked else { return }
        let now = MonotonicClock.nanoseconds()
        if let change = state.withLock({ $0.durabilityChecked(nil, at: now) }) { report(change) }
    }

    /// Why the server cannot take a notification now, for `/readyz` and acceptance; nil when
    /// it can.
    public var problem: String? {
        if let refusal = acceptanceRefusal { return refusal }
        guard isAnswering else {
            let why = client.lastError.map { " (\($0.message))" } ?? ""
            return "the server has not answered for \(Self.silenceLimit)\(why)"
        }
        return nil
    }

    // MARK: Probing

    private func tick() {
        dispatchPrecondition(condition: .onQueue(queue))
        let now = MonotonicClock.nanoseconds()
        let (probe, change) = state.withLock { state in (state.probeToSend(at: now), state.silenceChange(at: now)) }
        if let change { report(change) }
        if let probe {
            // PING, or in a Redis Cluster a read of the slot, so that MOVED takes the watch along.
            client.send(client.configuration.probe) { [weak self] _ in
                // An error reply is an answer too: the server is alive to say it.
                self?.probeFinished(probe)
            }
        }
        let due = lastDurabilityCheck.current.map { now - $0 >= UInt64(durabilityInterval.wholeMilliseconds) * 1_000_000 } ?? true
        if due { checkDurability() }
    }

    private func probeFinished(_ number: UInt64) {
        let change = state.withLock { state -> ServerWatchState.Change? in
            state.probeFinished(number)
            return state.silenceChange(at: MonotonicClock.nanoseconds())
        }
        if let change { report(change) }
    }

    private func checkDurability() {
        dispatchPrecondition(condition: .onQueue(queue))
        lastDurabilityCheck.withLock { $0 = MonotonicClock.nanoseconds() }
        guard durability.isChecked, client.isConnected else { return }
        client.send(durability.checks) { [weak self] results in
            guard let self else { return }
            // No answer is the probe's business (silence), not a verdict on the settings.
            var replies: [RESPValue] = []
            for result in results {
                guard case .success(let reply) = result else { return }
                replies.append(reply)
            }
            let refusal = durability.refusal(replies)
            let now = MonotonicClock.nanoseconds()
            if let change = state.withLock({ $0.durabilityChecked(refusal, at: now) }) { report(change) }
        }
    }

    private func report(_ change: ServerWatchState.Change) {
        let url = ("cluster.url", origin)
        switch change {
        case .silent:
            logger.warning("cluster server silent; /readyz answers 503 until it answers", [url, ("silent.after", "\(Self.silenceLimit)")])
        case .answering:
            logger.notice("cluster server answering again", [url])
        case .notDurable(let reason):
            logger.error("cluster server is not durable; notifications are answered 503 until it is", [url, ("reason", reason)])
        case .durable:
            logger.notice("cluster server durable again; notifications are accepted", [url])
        }
    }
}
