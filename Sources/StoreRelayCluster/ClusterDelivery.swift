import Dispatch
import StoreRelayConfig
import StoreRelayDelivery
import StoreRelayNet
import StoreRelayStorage
import StoreRelayCore

/// Delivery in cluster mode (docs/SPEC.md "Cluster mode"): this instance's consumers of every
/// destination's shared queue, and what the admin listener asks of delivery (event states,
/// dead letters, replays), answered from the server, so every instance shows the same.
public final class ClusterDelivery: DeliveryService {
    /// What a reload can change, swapped as a whole.
    struct Topology: Sendable {
        var destinations: [String: ClusterDestination]
        /// Destination names in configuration order, for status listings.
        var order: [String]
        var routes: RouteTable
    }

    public let instanceId: String
    public let deadLetters: ClusterDeadLetters
    /// Seals what this instance writes and checks what it reads (`cluster-key`).
    public let seal: ClusterSeal
    /// The event log on the server (`GET /api/events`).
    public let serverEventLog: ClusterEventLog
    public let reprocess = Locked<(@Sendable (StoredNotification) -> StoredNotification?)?>(nil)
    let client: RedisClient
    let keys = ClusterKeys()
    let topology: Locked<Topology>
    let settings: ClusterDestination.Settings
    let httpClient: HTTPClient
    let clock: any TimeSource
    let logger: Logger
    let observer: any DeliveryObserver
    let heartbeat: ClusterHeartbeat
    /// Seals records written before `cluster-key` while `unsealed` is set.
    let resealer: ClusterResealer
    /// The rule a replay re-applies: the cluster's dedupe window is the one acceptance used.
    let staleness: StalenessRule

    /// The letter is replayed only if it is still stored exactly as read (seal included):
    /// one whose replay was delivered meanwhile (gone), or that a failed replay wrote again,
    /// is not queued a second time. Nor is it while the event has an unfinished delivery to
    /// one of the destinations (its progress there: a replay's, or a retry's), whatever the
    /// `replaying:` marker says: a second stream entry would share the first's progress and
    /// delayed member (two deliveries, a reset budget, `_remaining` never back to 0). The
    /// record is written only over the one the replay read, so two replays of one event's
    /// letters cannot drop each other's destinations.
    static let replay = RedisScript(source: """
        -- Queues one dead letter's event again (docs/SPEC.md "Cluster mode", Shared state).
        -- KEYS[1] the record, KEYS[2] the event's state, then per destination its stream and
        -- its progress hash. ARGV[1] the record, ARGV[2] the event id, ARGV[3] the prefix,
        -- ARGV[4] the letter id, ARGV[5] the letter as read, ARGV[6] the record as read (''
        -- for none), ARGV[7] the marker's TTL in seconds (past any delivery's max-age: the
        -- delivery's end deletes it), ARGV[8..] per destination its name and its progress
        -- (a fresh budget, naming the letter).
        if redis.call('HGET', ARGV[3] .. 'letters', ARGV[4]) ~= ARGV[5] then
          return 'gone'
        end
        if (redis.call('GET', KEYS[1]) or '') ~= ARGV[6] then
          return 'changed'
        end
        local count = (#KEYS - 2) / 2
        for i = 1, count do
          if redis.call('HEXISTS', KEYS[2 + 2 * i], ARGV[2]) == 1 then
            return 'delivering'
          end
        end
        if not redis.call('SET', ARGV[3] .. 'replaying:' .. ARGV[4], '1', 'NX', 'EX', ARGV[7]) then
          return 'replaying'
        end
        redis.call('SET', KEYS[1], ARGV[1])
        redis.call('ZREM', ARGV[3] .. 'recent', ARGV[2])
        redis.call('HINCRBY', KEYS[2], '_remaining', count)
        for i = 1, count do
          redis.call('HDEL', KEYS[2], ARGV[6 + 2 * i])
          redis.call('HSET', KEYS[2 + 2 * i], ARGV[2], ARGV[7 + 2 * i])
          redis.call('XADD', KEYS[1 + 2 * i], '*', 'id', ARGV[2])
        end
        return 'replayed'
        """)

    /// `replay`'s input.
    struct ReplayCall: ScriptCall {
        static var script: RedisScript { ClusterDelivery.replay }

        /// The event's record and state.
        var record: String
        var state: String
        /// Per destination: its stream and progress hash, and the progress it starts with (a
        /// fresh budget, naming the letter).
        var destinations: [(name: String, stream: String, progressHash: String, progress: [UInt8])]
        /// The record to write, sealed.
        var sealedRecord: [UInt8]
        var eventId: String
        var prefix = ClusterKeys.prefix
        var letterId: String
        /// The letter as read: the replay happens only while it is still stored so.
        var letterRead: [UInt8]
        /// The record as read (nil: none): it is written only over that.
        var recordRead: [UInt8]?
        /// How long the `replaying:` marker lives.
        var markerSeconds: Int64

        var keys: [String] { [record, state] + destinations.flatMap { [$0.stream, $0.progressHash] } }

        var arguments: [[UInt8]] {
            typealias A = ScriptArgument
            return [sealedRecord, A.text(eventId), A.text(prefix), A.text(letterId), letterRead, recordRead ?? [], A.number(markerSeconds)]
                + destinations.flatMap { [A.text($0.name), $0.progress] }
        }

        /// What the script did.
        enum Verdict: String {
            /// Queued to every destination.
            case replayed
            /// Its `replaying:` marker is set: a replay of it is under way.
            case replaying
            /// A delivery of its event to one of the destinations is unfinished.
            case delivering
            /// The letter is no longer stored as read.
            case gone
            /// The record is no longer stored as read.
            case changed

            /// nil when the server did not answer, or answered something else.
            init?(reply: RESPValue?) {
                guard let text = reply?.string else { return nil }
                self.init(rawValue: text)
            }
        }
    }

    /// Past the longest delivery a replay starts: its destinations' longest `max-age` (a
    /// fresh budget) and a day for claims and stalls. The end of the delivery deletes the
    /// marker; this only clears one no end names (its progress unreadable).
    static let replayMarkerMargin: Duration = .seconds(86_400)

    /// - Parameter client: started, with the durability checks of `ServerDurability` when
    ///   the configuration requires them.
    /// - Parameter claim: this instance's claim on `instanceId`, guarding `client`'s
    ///   connections: renewed by the heartbeat, released once delivery has stopped.
    public init(configuration: GatewayConfiguration, cluster: ClusterConfiguration, client: RedisClient, instanceId: String,
                clock: any TimeSource = WallClock(), logger: Logger, observer: any DeliveryObserver = NoDeliveryObserver(),
                pollInterval: Duration = .milliseconds(100), claim: InstanceClaim? = nil) throws(DeliveryError) {
        self.instanceId = instanceId
        self.client = client
        self.clock = clock
        self.logger = logger
        self.observer = observer
        seal = ClusterSeal(keys: cluster.clusterKeys.map(\.value), acceptsUnsealed: cluster.acceptsUnsealed)
        serverEventLog = ClusterEventLog(client: client, retention: configuration.eventLogRetention, clock: clock, logger: logger)
        deadLetters = ClusterDeadLetters(client: client, seal: seal)
        staleness = StalenessRule(window: cluster.dedupeWindow)
        settings = ClusterDestination.Settings(claimAfter: cluster.claimAfter, recentEvents: configuration.recentEvents,
                                               pollInterval: pollInterval,
                                               maintenanceInterval: min(.seconds(1), cluster.claimAfter / 3))
        var clientConfiguration = HTTPClientConfiguration()
        clientConfiguration.logger = logger
        httpClient = HTTPClient(configuration: clientConfiguration)
        heartbeat = ClusterHeartbeat(client: client, instanceId: instanceId, clock: clock, claim: claim, logger: logger)
        let topology = Locked(Topology(destinations: [:], order: configuration.destinations.map(\.name), routes: configuration.routes))
        self.topology = topology
        resealer = ClusterResealer(client: client, seal: seal, destinations: { topology.current.destinations.keys.sorted() }, logger: logger)
        var destinations: [String: ClusterDestination] = [:]
        for destination in configuration.destinations {
            destinations[destination.name] = try makeDestination(destination)
        }
        topology.withLock { $0.destinations = destinations }
    }

    private func makeDestination(_ definition: DestinationConfiguration) throws(DeliveryError) -> ClusterDestination {
        // File queues: each instance writes its own subdirectory (SPEC), so instances sharing
        // a volume never write the same segment.
        let setup = try DestinationSetup(definition, client: httpClient, clock: clock, logger: logger, fileSubdirectory: instanceId)
        return ClusterDestination(definition: definition, setup: setup, client: client, consumer: instanceId, settings: settings,
                                  seal: seal, clock: clock, logger: logger, observer: observer, eventLog: serverEventLog)
    }

    /// Starts every destination's consumer and the heartbeat.
    public func start() {
        heartbeat.start()
        resealer.start()
        for destination in topology.current.destinations.values { destination.start() }
    }

    /// This instance just enqueued an event on these destinations: read them now.
    public func nudge(_ destinations: [String]) {
        let topology = topology.current
        for name in destinations { topology.destinations[name]?.nudge() }
    }

    public var status: [DestinationStatus] {
        let topology = topology.current
        return topology.order.compactMap { topology.destinations[$0]?.status }
    }

    /// Each destination's figures on the server (stream length, pending, oldest pending age,
    /// delayed), as last refreshed.
    public var serverFigures: [(destination: String, figures: ClusterQueue.Figures)] {
        let topology = topology.current
        return topology.order.compactMap { name in topology.destinations[name].map { (name, $0.serverFigures) } }
    }

    public var deadLetterArchive: any DeadLetterArchive { deadLetters }

    public var deadLetterCounts: [String?: Int] { deadLetters.lastCountsByDestination }

    public func refreshDeadLetterCounts() async { _ = await deadLetters.countsByDestination }

    // MARK: Events

    public func searchEvents(_ query: EventLogQuery, limit: Int, after cursor: EventLogCursor?) async -> Result<EventLogPage, StorageError>? {
        await serverEventLog.search(query, limit: limit, after: cursor)
    }

    public func state(ofEvent id: String) async -> EventDeliveryState? {
        let replies = await client.replies([RESPCommand("GET", keys.event(id)), RESPCommand("HGETALL", keys.state(id))])
        // What fails its cluster-key check is not shown as the event's.
        guard replies.count == 2, case .success(let record) = replies[0], let sealed = record.bytes,
              case .intact(let bytes) = seal.open(sealed, .event, id), let notification = StoredNotification(decoding: bytes)
        else { return await stateFromDeadLetters(ofEvent: id) }
        var recorded: [String: EventDeliveryState.Delivery] = [:]
        if case .success(let fields) = replies[1], let pairs = fields.elements {
            var index = 0
            while index + 1 < pairs.count {
                if let name = pairs[index].string, !name.hasPrefix("_"), let sealed = pairs[index + 1].bytes,
                   case .intact(let bytes) = seal.open(sealed, .state, id, name), let json = try? JSONValue.parse(bytes),
                   let delivery = EventDeliveryState.Delivery(json: json) {
                    recorded[name] = delivery
                }
                index += 2
            }
        }
        let routed = notification.disposition == .accept ? notification.destinations : []
        var deliveries = routed.map { name in
            recorded.removeValue(forKey: name)
                ?? EventDeliveryState.Delivery(destination: name, phase: .pending, attempts: [], nextAttempt: nil, deadLetterId: nil)
        }
        // Destinations a replay added (an unrouted letter routed again).
        deliveries += recorded.keys.sorted().compactMap { recorded[$0] }
        return EventDeliveryState(notification: notification, deliveries: deliveries)
    }

    /// An event no longer among the recent ones: what its dead letters tell, if it has any.
    private func stateFromDeadLetters(ofEvent id: String) async -> EventDeliveryState? {
        await EventDeliveryState(deadLetters: deadLetters.letters(forEvent: id), eventId: id)
    }

    public func events(ofSubscription originalTransactionId: String, limit: Int) async -> [EventDeliveryState] {
        let known = await client.reply(RESPCommand("ZREVRANGE", keys.subscription(originalTransactionId), "0", String(max(0, limit - 1))))
        var ids = Set((known?.elements ?? []).compactMap(\.string))
        let letters = await deadLetters.list(DeadLetterQuery(originalTransactionId: originalTransactionId), limit: limit, cursor: nil)
        ids.formUnion(letters.items.map(\.eventId))
        var states: [EventDeliveryState] = []
        for id in ids {
            if let state = await state(ofEvent: id) { states.append(state) }
        }
        states.sort { ($0.notification.receivedAt.milliseconds, $0.notification.id) > ($1.notification.receivedAt.milliseconds, $1.notification.id) }
        return Array(states.prefix(limit))
    }

    // MARK: Replays

    /// As single-node mode replays (`DeliveryEngine.replay(deadLetterId:force:)`): a stale
    /// notification only when `force`.
    public func replay(deadLetterId id: String, force: Bool = false) async -> ReplayResult {
        await replay(deadLetterId: id, force: force, scope: nil)
    }

    /// `scope`: a bulk replay's, which the letter as read (and what a `tampered` one stands
    /// in for) must be in, whatever the index said when it was listed.
    func replay(deadLetterId id: String, force: Bool, scope: DeadLetterQuery?) async -> ReplayResult {
        guard let stored = await deadLetters.stored(id: id) else { return .notFound }
        if let scope, !scope.admits(stored.letter) { return .notFound }
        return await replay(stored.letter, read: stored.bytes, force: force, scope: scope)
    }

    /// Replays `letter`, stored as `read` when it was read: if it is no longer stored so
    /// (its replay was delivered meanwhile, by this instance or another), nothing is queued.
    /// A `tampered` letter is replayed only as what it stands in for, once that checks out.
    func replay(_ letter: DeadLetter, read: [UInt8], force: Bool, scope: DeadLetterQuery? = nil, rereads: Int = 2) async -> ReplayResult {
        var letter = letter
        if letter.reason == .tampered {
            switch await meetTampered(letter, read: read) {
            case .recovered(let original):
                if let scope, !scope.admits(original) { return .tampered }
                letter = original
            case .refused(let result):
                return result
            case .changed:
                guard rereads > 0 else { return .alreadyReplaying }
                guard let again = await deadLetters.stored(id: letter.id) else { return .notFound }
                if let scope, !scope.admits(again.letter) { return .notFound }
                return await replay(again.letter, read: again.bytes, force: force, scope: scope, rereads: rereads - 1)
            }
        }
        let topology = topology.current
        let plan = ReplayPlan.make(letter, routes: topology.routes, reprocess: reprocess.current,
                                   staleness: force ? nil : staleness, now: clock.now()) { topology.destinations[$0] != nil }
        guard case .plan(var stored, let names) = plan else { return plan.refusal! }
        // Delivered like an accepted event to those destinations, with a fresh budget.
        stored.disposition = .accept
        var progress = ClusterProgress(budgetStart: clock.now())
        progress.attempts = letter.attempts
        progress.attemptsBefore = letter.attempts.count
        progress.replayOf = letter.id
        let eventId = stored.id
        let markerLifetime = (names.compactMap { topology.destinations[$0]?.maxAge }.max() ?? .zero) + Self.replayMarkerMargin
        // The record names every destination with an entry to deliver: those of the record
        // as it stands (another destination may still be retrying) and the replay's. The
        // script writes it only over the record read here; another replay in between makes
        // it read again.
        for _ in 0..<3 {
            let current = await client.reply(RESPCommand("GET", keys.event(eventId)))?.bytes
            stored.destinations = names
            if let current, case .intact(let bytes) = seal.open(current, .event, eventId),
               let existing = StoredNotification(decoding: bytes), existing.disposition == .accept {
                stored.destinations = existing.destinations + names.filter { !existing.destinations.contains($0) }
            }
            let call = ReplayCall(
                record: keys.event(eventId), state: keys.state(eventId),
                destinations: names.map { name in
                    (name, keys.queue(name), keys.progress(name), seal.seal(progress.encoded, .progress, name, eventId))
                },
                sealedRecord: seal.seal(stored.encoded(), .event, eventId), eventId: eventId, letterId: letter.id, letterRead: read,
                recordRead: current, markerSeconds: markerLifetime.wholeMilliseconds / 1000)
            switch await ReplayCall.Verdict(reply: client.script(call)) {
            case .replayed?:
                logger.info("dead letter replayed", [("dead_letter.id", letter.id), ("destinations", names.joined(separator: " "))])
                for name in names { serverEventLog.setState(.pending, eventId: eventId, destination: name) }
                nudge(names)
                return .replayed(destinations: names)
            case .replaying?:
                return .alreadyReplaying
            case .delivering?:
                logger.info("dead letter not replayed: a delivery of its event there is unfinished", [
                    ("dead_letter.id", letter.id), ("destinations", names.joined(separator: " ")),
                ])
                return .alreadyReplaying
            case .gone?:
                // Delivered by a replay meanwhile, deleted, or written again by a failed one
                // (that one can be replayed: read it again).
                return .notFound
            case .changed?:
                continue
            case nil:
                logger.warning("dead letter not replayed: the cluster server did not answer", [("dead_letter.id", letter.id)])
                return .notFound
            }
        }
        logger.warning("dead letter not replayed: its event's record kept changing", [("dead_letter.id", letter.id)])
        return .alreadyReplaying
    }

    /// Replays every letter of `query.bulkReplayScope`, each with one script (stale ones
    /// only when `force`), each only if the letter as read is in the scope.
    public func replayAll(_ query: DeadLetterQuery, force: Bool = false) async -> BulkReplayResult {
        var result = BulkReplayResult()
        var cursor: String?
        let scope = query.bulkReplayScope
        repeat {
            let page = await deadLetters.list(scope, limit: 500, cursor: cursor)
            for letter in page.items {
                switch await replay(deadLetterId: letter.id, force: force, scope: scope.ignoringTime) {
                case .replayed: result.replayed += 1
                case .stale: result.stale += 1
                default: break
                }
            }
            cursor = page.nextCursor
        } while cursor != nil
        return result
    }

    // MARK: Reload and stop

    /// Destinations whose definition changed are replaced (the old consumer stops; what it
    /// had pending is claimed after `claim-after`), new ones start, removed ones stop. Their
    /// queues stay on the server for instances that still deliver them. Nothing here waits:
    /// `completion` runs before this returns.
    public func reconfigure(_ configuration: GatewayConfiguration, completion: @escaping @Sendable (DeliveryError?) -> Void) {
        do {
            try replaceDestinations(configuration)
            completion(nil)
        } catch {
            completion(error)
        }
    }

    private func replaceDestinations(_ configuration: GatewayConfiguration) throws(DeliveryError) {
        let current = topology.current
        var next: [String: ClusterDestination] = [:]
        var started: [ClusterDestination] = []
        for definition in configuration.destinations {
            if let existing = current.destinations[definition.name], existing.definition == definition {
                next[definition.name] = existing
            } else {
                let made = try makeDestination(definition)
                next[definition.name] = made
                started.append(made)
            }
        }
        let retired = current.destinations.filter { next[$0.key] !== $0.value }.map(\.value)
        topology.withLock { $0 = Topology(destinations: next, order: configuration.destinations.map(\.name), routes: configuration.routes) }
        for destination in started { destination.start() }
        for destination in retired { destination.stop(grace: .seconds(10)) {} }
    }

    /// Pauses or resumes `name` for every instance: stored in the server's `paused` set
    /// first, then applied here at once; the other instances follow at their next tick.
    public func setPaused(_ pause: Bool, destination name: String) async -> PauseOutcome {
        guard let destination = topology.current.destinations[name] else { return .unknownDestination }
        let command = RESPCommand(pause ? "SADD" : "SREM", keys.paused, name)
        guard let reply = await client.reply(command), let changed = reply.integer else {
            return .failed("the cluster server did not store the change; try again")
        }
        destination.setPaused(pause)
        if changed == 1 { logger.notice(pause ? "destination paused" : "destination resumed", [("destination", name)]) }
        return .done(changed: changed == 1)
    }

    public func stop(grace: Duration, completion: @escaping @Sendable () -> Void) {
        heartbeat.stop()
        resealer.stop()
        let group = DispatchGroup()
        for destination in topology.current.destinations.values {
            group.enter()
            destination.stop(grace: grace) { group.leave() }
        }
        group.notify(queue: .global()) { [httpClient, heartbeat] in
            httpClient.shutdown()
            // Only now: an instance taking the id over must not meet deliveries still running.
            heartbeat.releaseClaim(completion: completion)
        }
    }
}

extension ClusterDelivery {
    /// `SET lease:<name> <instance> NX PX`: `completion` gets true when this instance now
    /// holds the lease (false when another does, or the server cannot be reached).
    public func takeLease(_ name: String, for duration: Duration, completion: @escaping @Sendable (Bool) -> Void) {
        let command = RESPCommand("SET", keys.lease(name), instanceId, "NX", "PX", String(max(1, duration.wholeMilliseconds)))
        client.send(command) { result in
            guard case .success(let reply) = result, reply.errorKind == nil else { return completion(false) }
            completion(reply.string == "OK")
        }
    }

    /// What `/api/status` shows of cluster mode: this instance, the live ones, the server and
    /// its durability settings (waits for the server: admin only).
    public func statusJSON(_ cluster: ClusterConfiguration) async -> JSONValue {
        let names = ServerDurability.settingNames
        let replies = await client.replies(names.map { RESPCommand("CONFIG", "GET", $0) })
        var durability: [(String, JSONValue)] = []
        for (reply, name) in zip(replies, names) {
            switch reply {
            case .success(let value) where value.errorKind == nil:
                durability.append((name, .string(ServerDurability.value(value))))
            case .success(let value):
                durability.append((name, .string("unknown: \(value.description)")))
            case .failure(let error):
                durability.append((name, .string("unknown: \(error.message)")))
            }
        }
        let instances = await heartbeat.liveInstances().map { instance -> JSONValue in
            ["id": .string(instance.id), "startedAt": .string(instance.startedAt?.iso8601), "lastSeen": .string(instance.lastSeen.iso8601)]
        }
        return [
            "server": .string(cluster.server),
            "connected": .bool(client.isConnected),
            // The primary a topology led to (the URL's host for one server).
            "node": .string(client.connectedNode?.description),
            "lastError": .string(client.lastError?.message),
            "instanceId": .string(instanceId),
            "instances": .array(instances),
            "durability": .object(JSONObject(durability)),
            "requireAof": .bool(cluster.requireAOF),
            "requireNoeviction": .bool(cluster.requireNoEviction),
            "warnings": .array(cluster.warnings.map { .string($0) }),
            "waitReplicas": .integer(Int64(cluster.waitReplicas)),
        ]
    }
}
