import Dispatch
import Foundation
import StoreRelayNet
import StoreRelayCore

/// This instance's claim on its `instance-id` (docs/SPEC.md "Cluster mode on managed and
/// replicated servers", Hygiene): two live instances with one id would be one consumer of
/// every group, take each other's deliveries as their own, and write the same file-queue
/// segments. So the id is held on the server: `claim:<id>` holds a token of this process,
/// with the heartbeat's lifetime as TTL, and
///
/// - every new connection claims it (or finds it already ours) before it is used: a
///   connection check, so no command of this instance ever runs while another holds the id;
/// - the heartbeat renews it; a renewal that finds it held by another (this process stalled
///   past the lifetime and a second instance took the id) drops the connection, and the
///   connection checks keep refusing until the other instance is gone;
/// - a graceful stop releases it, so a restart takes it at once.
///
/// An instance killed with `kill -9` cannot release it: restarted with the same id, it waits
/// for the claim to lapse, at most `lifetime` after the old process's last renewal. It stops
/// waiting, and refuses to start, as soon as it sees the claim renewed: its holder is alive.
/// (Proving "the same process lineage" to skip the wait would need a token kept on disk and
/// a lock on it; a wait of at most 15 s after a crash is simpler and cannot be fooled by a
/// copied data directory.)
public final class InstanceClaim: Sendable {
    public static let lifetime = ClusterHeartbeat.liveFor

    public let instanceId: String
    /// `host/pid/random`: unique to this process, and says where it runs in a refusal.
    public let token: String
    let key: String

    /// What the connection checks last saw of another holder.
    private struct Sighting {
        var at: ContinuousClock.Instant
        var remaining: Int64
        var holder: String
    }
    private struct State {
        var elsewhere: Sighting?
        var holderIsAlive = false
    }
    private let state = Locked(State())

    public init(instanceId: String, keys: ClusterKeys = ClusterKeys()) {
        self.instanceId = instanceId
        let host = ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? "host"
        let random = (0..<8).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
        token = "\(host.prefix(48))/\(ProcessInfo.processInfo.processIdentifier)/\(random)"
        key = keys.claim(instanceId)
    }

    /// Takes the claim if free, renews it if ours: `{1}`; held by another: `{0, its
    /// remaining milliseconds (-1: no expiry), its token}`.
    static let claimSource = """
        local holder = redis.call('GET', KEYS[1])
        if holder == false or holder == ARGV[1] then
          redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
          return {1}
        end
        return {0, redis.call('PTTL', KEYS[1]), holder}
        """

    /// `claimSource`'s answer.
    enum ClaimReply: Equatable {
        /// Taken now, or already this instance's.
        case ours
        /// Held by the instance whose token is `holder`, for `remaining` more milliseconds
        /// (-1: no expiry).
        case heldElsewhere(remaining: Int64, holder: String)

        /// nil for anything but the script's answer (an error, no answer).
        init?(_ reply: RESPValue?) {
            guard let parts = reply?.elements, let verdict = parts.first?.integer else { return nil }
            if verdict == 1 {
                self = .ours
            } else {
                self = .heldElsewhere(remaining: parts.count > 1 ? parts[1].integer ?? -1 : -1,
                                      holder: parts.count > 2 ? parts[2].string ?? "?" : "?")
            }
        }
    }

    /// Deletes the claim if it is still ours.
    static let releaseSource = """
        if redis.call('GET', KEYS[1]) == ARGV[1] then
          return redis.call('DEL', KEYS[1])
        end
        return 0
        """

    /// The claim as one command, for the connection checks and the heartbeat's renewals
    /// (`EVAL` with its source: the server caches it, and a check must not depend on a
    /// script loaded on an earlier connection).
    public var claimCommand: RESPCommand {
        RESPCommand("EVAL", Self.claimSource, "1", key, token, String(Self.lifetime.wholeMilliseconds))
    }

    var releaseCommand: RESPCommand { RESPCommand("EVAL", Self.releaseSource, "1", key, token) }

    /// Makes every new connection of `configuration` claim the id first.
    public func guardConnections(of configuration: inout RedisConfiguration) {
        configuration.addConnectionCheck([claimCommand]) { [self] replies in refusal(replies.first) }
    }

    /// nil when `reply` (to `claimCommand`) says the claim is ours; else why not, as a sentence.
    func refusal(_ reply: RESPValue?) -> String? {
        // In a Redis Cluster whose slot is moving, the node a connection goes to may not hold
        // the claim now (MOVED, ASK: a connection that follows a redirection; TRYAGAIN). That
        // says nothing of another holder, and the heartbeat's renewals, which follow the
        // slot, check the claim where it is.
        if let kind = reply?.errorKind, kind == "MOVED" || kind == "ASK" || kind == "TRYAGAIN" { return nil }
        if case .error(let message)? = reply {
            // An ACL without EVAL, say: the id cannot be claimed, so it must not be used.
            return "the server refused the claim on instance-id \(instanceId) (\(message.prefix(200)))"
        }
        let remaining: Int64, holder: String
        switch ClaimReply(reply) {
        case nil:
            return "the server did not answer the claim on instance-id \(instanceId)"
        case .ours?:
            state.withLock { $0.elsewhere = nil }
            return nil
        case .heldElsewhere(let left, let token)?:
            remaining = left
            holder = String(token.prefix(120))
        }
        let alive = observe(Sighting(at: .now, remaining: remaining, holder: holder))
        let why = alive
            ? "it renews its claim"
            : "its claim lapses within \(Self.lifetime.wholeMilliseconds / 1000) s of its last heartbeat unless renewed"
        return "instance-id \(instanceId) is in use by another instance (\(holder)); \(why). Two live instances with one id "
            + "would take each other's deliveries and write the same file-queue segments: give each instance its own instance-id"
    }

    /// Records a sighting of another holder; true once it is known to be alive: its claim was
    /// renewed since the last sighting (its remaining time went up), or never expires.
    private func observe(_ sighting: Sighting) -> Bool {
        state.withLock { state in
            if sighting.remaining < 0 { state.holderIsAlive = true }
            if let last = state.elsewhere, last.holder == sighting.holder {
                let elapsed = (sighting.at - last.at).wholeMilliseconds
                // A renewal puts back a whole lifetime: far more than a second of slack.
                if sighting.remaining > last.remaining - elapsed + 1_000 { state.holderIsAlive = true }
            } else if state.elsewhere != nil {
                state.holderIsAlive = true  // another token: someone claimed it meanwhile
            }
            state.elsewhere = sighting
            return state.holderIsAlive
        }
    }

    /// Whether the last connection check found the id held by another instance.
    public var isHeldElsewhere: Bool { state.withLock { $0.elsewhere != nil } }

    /// At start, with the first connection refused because another instance holds the id:
    /// waits until the claim lapses and `client` connects, or until the holder shows it is
    /// alive, or `timeout` passes, then calls `completion` on `queue`. The caller reads
    /// `client` then.
    public func awaitRelease(by client: RedisClient, timeout: Duration, logger: Logger, on queue: DispatchQueue,
                             completion: @escaping @Sendable () -> Void) {
        guard isHeldElsewhere, !state.withLock({ $0.holderIsAlive }) else { return queue.async(execute: completion) }
        logger.warning("cluster: instance-id \(instanceId) is claimed by another instance; waiting for the claim to lapse "
            + "(as after a crash of this instance) or to be renewed (a live instance)",
                       [("instance.id", instanceId), ("wait.ms", timeout.wholeMilliseconds)])
        Recheck.until(ContinuousClock.now + timeout, every: .milliseconds(20), on: queue, { [self] in
            client.isConnected || !isHeldElsewhere || state.withLock { $0.holderIsAlive }
        }, completion: { _ in completion() })
    }

    /// Renews the claim on `client`'s connection; when another instance holds it now, logs
    /// why and drops the connection, whose checks then refuse until the id is free.
    public func renew(on client: RedisClient, logger: Logger) {
        client.send(claimCommand) { [self] result in
            guard case .success(let reply) = result, reply.errorKind == nil, let refusal = refusal(reply) else { return }
            logger.error("cluster: this instance lost its instance-id; it stops using the server until the id is free",
                         [("instance.id", instanceId), ("reason", refusal)])
            client.dropConnection(RedisError(.refused, refusal))
        }
    }

    /// Gives the id back (a graceful stop): a restart takes it at once. `completion` runs
    /// once the server answered (or could not): the caller must not close the connection
    /// before, or the command may be lost with it.
    public func release(on client: RedisClient, completion: @escaping @Sendable () -> Void = {}) {
        client.send(releaseCommand) { _ in completion() }
    }
}
