import Dispatch
import StoreRelayNet
import StoreRelayCore

/// This instance's heartbeat on the server: every few seconds it scores itself in the
/// `instances` set and refreshes its `instance:<id>` key, so `/api/status` on any instance
/// lists the live ones, and renews its claim on its id (`InstanceClaim`). An instance that
/// stops beating drops out after `liveFor`.
public final class ClusterHeartbeat: Sendable {
    public static let interval: Duration = .seconds(5)
    /// Three missed beats and an instance is no longer listed.
    public static let liveFor: Duration = .seconds(15)

    /// One live instance as the server lists it.
    public struct Instance: Sendable, Equatable {
        public var id: String
        public var startedAt: Timestamp?
        public var lastSeen: Timestamp
    }

    private let client: RedisClient
    private let keys = ClusterKeys()
    private let instanceId: String
    private let clock: any TimeSource
    private let startedAt: Timestamp
    private let timer = RepeatingTimer()
    private let claim: InstanceClaim?
    private let logger: Logger

    init(client: RedisClient, instanceId: String, clock: any TimeSource, claim: InstanceClaim? = nil, logger: Logger = .disabled) {
        self.client = client
        self.instanceId = instanceId
        self.clock = clock
        self.claim = claim
        self.logger = logger
        startedAt = clock.now()
    }

    func start() {
        timer.start(every: Self.interval, leeway: .milliseconds(200), on: DispatchQueue(label: "storerelay.cluster.heartbeat")) { [weak self] in
            self?.beat()
        }
    }

    func stop() {
        timer.stop()
        // Leaves the list at once rather than after `liveFor`.
        client.send([RESPCommand("ZREM", keys.instances, instanceId), RESPCommand("DEL", keys.instance(instanceId))]) { _ in }
    }

    /// Gives the instance id back, once nothing of this instance runs any more; `completion`
    /// runs when the server has answered.
    func releaseClaim(completion: @escaping @Sendable () -> Void) {
        guard let claim else { return completion() }
        claim.release(on: client, completion: completion)
    }

    private func beat() {
        claim?.renew(on: client, logger: logger)
        let now = clock.now().milliseconds
        let about: JSONValue = ["id": .string(instanceId), "startedAt": .string(startedAt.iso8601)]
        client.send([
            RESPCommand("ZADD", keys.instances, String(now), instanceId),
            RESPCommand("SET", keys.instance(instanceId), about.serialized(), "PX", String(Self.liveFor.wholeMilliseconds)),
            // Instances gone for an hour leave the set.
            RESPCommand("ZREMRANGEBYSCORE", keys.instances, "-inf", String(now - 3_600_000)),
        ]) { _ in }
    }

    /// The instances that beat within `liveFor`, by id (waits for the server; admin only).
    public func liveInstances() async -> [Instance] {
        let since = clock.now().milliseconds - Self.liveFor.wholeMilliseconds
        let listed = await client.reply(RESPCommand("ZRANGEBYSCORE", keys.instances, String(since), "+inf", "WITHSCORES"))?.elements ?? []
        var instances: [Instance] = []
        var index = 0
        while index + 1 < listed.count {
            if let id = listed[index].string, let seen = listed[index + 1].integer ?? listed[index + 1].string.flatMap({ Double($0) }).map({ Int64($0) }) {
                instances.append(Instance(id: id, startedAt: nil, lastSeen: Timestamp(milliseconds: seen)))
            }
            index += 2
        }
        guard !instances.isEmpty else { return [] }
        let about = await client.reply(RESPCommand("MGET", instances.map { keys.instance($0.id) }))?.elements ?? []
        for (index, value) in about.enumerated() where index < instances.count {
            let json = value.bytes.flatMap { try? JSONValue.parse($0) }
            instances[index].startedAt = json?["startedAt"]?.stringValue.flatMap(Timestamp.init(iso8601:))
        }
        return instances.sorted { $0.id < $1.id }
    }
}
