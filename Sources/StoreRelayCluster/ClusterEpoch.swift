import Dispatch
import StoreRelayNet
import StoreRelayCrypto
import StoreRelayCore

/// "A server that lost its data is noticed" (docs/SPEC.md "Cluster mode", Server resets).
///
/// The server holds an epoch, a random id written once (`epoch`), and a counter every check
/// increments (`epoch-clock`). Each instance checks both on every (re)connect and every
/// `interval`: an epoch missing (the server was flushed, or restarted without its
/// append-only file) or changed (another instance found it missing first), or a counter
/// lower than this instance has already seen (a failover to a replica that lacks writes),
/// means acknowledged records may be gone. That is a `Reset`, reported once per loss, with
/// the last moment the server was seen whole, so that what was lost can be asked of Apple.
///
/// What an instance last saw is kept in `stateFile` too, so a loss while every instance was
/// down is noticed at the next start (by instances that keep their data directory). All
/// state is confined to `work`.
public final class ClusterEpoch: @unchecked Sendable {
    public static let interval: Duration = .seconds(2)
    /// How often the state file is rewritten while nothing changes: a start after a loss
    /// then asks Apple for at most this much more than needed.
    static let saveEvery: Duration = .seconds(60)
    /// Checks remembered for a rolled-back counter: an hour at the default interval.
    static let samplesKept = 1_800

    /// One loss of data, as one instance noticed it.
    public struct Reset: Sendable, Equatable {
        public enum Cause: String, Sendable {
            /// No epoch on the server: flushed, or restarted without its data.
            case missing
            /// Another epoch than the one this instance knew: found missing by another.
            case changed
            /// The epoch as before, its counter lower than already seen: writes were lost
            /// (a failover to a replica that lacked them).
            case rolledBack = "rolled-back"
        }

        public var cause: Cause
        public var previousEpoch: String
        public var epoch: String
        /// The last moment the server was seen whole: what was written after may be lost.
        public var lostSince: Timestamp
        public var noticedAt: Timestamp
    }

    static let script = RedisScript(source: """
        -- The epoch check (docs/SPEC.md "Cluster mode", Server resets). KEYS[1] the epoch,
        -- KEYS[2] its counter; ARGV[1] a new epoch, written only when there is none.
        -- Answers {epoch, 1 when written now, the counter after this check}.
        local epoch = redis.call('GET', KEYS[1])
        local created = 0
        if not epoch then
          epoch = ARGV[1]
          redis.call('SET', KEYS[1], epoch)
          created = 1
        end
        return {epoch, created, redis.call('INCR', KEYS[2])}
        """)

    /// `script`'s input.
    struct CheckCall: ScriptCall {
        static var script: RedisScript { ClusterEpoch.script }

        var epoch: String
        var counter: String
        /// Written only when the server has no epoch.
        var candidate: String

        var keys: [String] { [epoch, counter] }
        var arguments: [[UInt8]] { [ScriptArgument.text(candidate)] }

        /// `{epoch, created, counter}`: the server's epoch, whether this check wrote it, and
        /// the counter after this check.
        struct Reply: Equatable {
            var epoch: String
            var created: Bool
            var counter: Int64

            /// nil for anything else (an error reply among them).
            init?(_ reply: RESPValue) {
                guard let parts = reply.elements, parts.count == 3,
                      let epoch = parts[0].string, let created = parts[1].integer, let counter = parts[2].integer
                else { return nil }
                self.epoch = epoch
                self.created = created == 1
                self.counter = counter
            }
        }
    }

    private let client: RedisClient
    private let keys = ClusterKeys()
    private let clock: any TimeSource
    private let interval: Duration
    private let stateFile: ClusterEpochFile?
    private let logger: Logger
    private let work = DispatchQueue(label: "storerelay.cluster.epoch", target: .deliveryWork)
    /// The state file's writes (fsync) block: their own queue, never `work`'s pool.
    private let files = DispatchQueue(label: "storerelay.cluster.epoch.file")
    private let timer = RepeatingTimer()

    // Confined to `work`.
    private var known: String?
    /// When `known` was last confirmed.
    private var lastSeen: Timestamp?
    private var lastSaved: Timestamp?
    /// This instance's checks of `known`: the counter each left, and when.
    private var samples: [(counter: Int64, at: Timestamp)] = []
    private var checking = false
    private var onReset: (@Sendable (Reset) -> Void)?
    private var stopped = false

    /// - Parameter stateFile: where the epoch last seen is kept between runs; nil: nowhere.
    public init(client: RedisClient, clock: any TimeSource = WallClock(), interval: Duration = interval, stateFile: String? = nil,
                logger: Logger = .disabled) {
        self.client = client
        self.clock = clock
        self.interval = interval
        self.stateFile = stateFile.map(ClusterEpochFile.init(path:))
        self.logger = logger
        if let saved = self.stateFile?.load() {
            known = saved.epoch
            lastSeen = saved.lastSeen
        }
    }

    /// Checks now, on every (re)connect, and every `interval`; `onReset` is told each loss.
    public func start(onReset: @escaping @Sendable (Reset) -> Void) {
        client.observeConnection { [weak self] connected, _ in
            guard connected, let self else { return }
            work.async { self.check() }
        }
        work.async { [self] in
            self.onReset = onReset
            timer.start(every: interval, leeway: .milliseconds(100), on: work) { [weak self] in self?.check() }
        }
    }

    public func stop() {
        work.sync {
            stopped = true
            timer.stop()
            onReset = nil
        }
    }

    /// The epoch this instance knows, and when the server last showed it (status).
    public var current: (epoch: String?, lastSeen: Timestamp?) {
        work.sync { (known, lastSeen) }
    }

    private func check() {
        dispatchPrecondition(condition: .onQueue(work))
        guard !stopped, !checking, client.isConnected else { return }
        checking = true
        let candidate = SecureRandom.hexToken(16)
        client.evaluate(CheckCall(epoch: keys.epoch, counter: keys.epochClock, candidate: candidate)) { [self] result in
            work.async { [self] in
                checking = false
                guard case .success(let reply) = result, let answer = CheckCall.Reply(reply) else {
                    if case .success(let reply) = result, reply.errorKind != nil {
                        logger.warning("cluster epoch check refused", [("reply", String(reply.description.prefix(300)))])
                    }
                    return
                }
                observed(epoch: answer.epoch, created: answer.created, counter: answer.counter)
            }
        }
    }

    private func observed(epoch: String, created: Bool, counter: Int64) {
        dispatchPrecondition(condition: .onQueue(work))
        guard !stopped else { return }
        let now = clock.now()
        var reset: Reset?
        if let previous = known, previous != epoch {
            reset = Reset(cause: created ? .missing : .changed, previousEpoch: previous, epoch: epoch,
                          lostSince: lastSeen ?? now, noticedAt: now)
            samples = []
        } else if let last = samples.last, counter <= last.counter {
            // The server's counter was `counter - 1` before this check: this instance's
            // checks that left more than that are lost, and so is what was written since
            // the last one it kept.
            let kept = samples.last { $0.counter < counter }
            reset = Reset(cause: .rolledBack, previousEpoch: epoch, epoch: epoch,
                          lostSince: kept?.at ?? samples.first?.at ?? now, noticedAt: now)
            samples = []
        }
        known = epoch
        lastSeen = now
        samples.append((counter, now))
        if samples.count > Self.samplesKept { samples.removeFirst(samples.count - Self.samplesKept) }
        if reset != nil || lastSaved.map({ now.milliseconds - $0.milliseconds >= Self.saveEvery.wholeMilliseconds }) ?? true {
            save(now)
        }
        // Told off this queue: the handler may ask `current`.
        if let reset, let onReset { DispatchQueue.global().async { onReset(reset) } }
    }

    private func save(_ now: Timestamp) {
        guard let stateFile, let known else { return }
        lastSaved = now
        files.async { [logger] in
            do {
                try stateFile.save(epoch: known, lastSeen: now)
            } catch {
                logger.warning("cluster epoch not saved; a loss of the server's data while this instance is down may go unnoticed",
                               [("path", stateFile.path), ("error", "\(error)")])
            }
        }
    }
}

/// `data/cluster-epoch.json` (0600): `{"epoch": id, "lastSeen": <UNIX ms>}`, the server's
/// epoch as this instance last saw it.
struct ClusterEpochFile: Sendable {
    let path: String

    func load() -> (epoch: String, lastSeen: Timestamp)? {
        guard ClusterFiles.exists(path), let bytes = try? ClusterFiles.readAll(path), let json = try? JSONValue.parse(bytes),
              let epoch = json["epoch"]?.stringValue, let seen = json["lastSeen"]?.int64Value
        else { return nil }
        return (epoch, Timestamp(milliseconds: seen))
    }

    func save(epoch: String, lastSeen: Timestamp) throws(ClusterError) {
        let json = JSONValue.object(JSONObject([("epoch", .string(epoch)), ("lastSeen", .integer(lastSeen.milliseconds))]))
        // In cluster mode nothing else may have created the data directory (an admin-token in
        // the configuration, webhook destinations only): without this, no save ever succeeds.
        if let slash = path.lastIndex(of: "/"), slash != path.startIndex {
            try ClusterFiles.createDirectory(String(path[..<slash]))
        }
        try ClusterFiles.replaceFileDurably(path, json.serializedBytes())
    }
}
