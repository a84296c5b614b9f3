import StoreRelayCore
import StoreRelayNet

/// What a valid configuration may still have wrong: apps it cannot tell apart, extra roots
/// trusted for production, and routes naming a notification type or subtype Apple does not
/// send (a typo, or the changelog's "MIGRATE" for `MIGRATION`), which never match, silently.
/// `storerelay check` prints these, `serve` logs them at start and reload.
extension GatewayConfiguration {
    public var warnings: [String] {
        appWarnings + trustWarnings + proxyWarnings + routeWarnings + exposedKeyWarnings + plaintextAPIWarnings + clusterKeyWarnings
            + plaintextRedisWarnings + plaintextAMQPWarnings
    }

    /// PLAIN authentication over `amqp://` sends the password as it is: only this machine's
    /// loopback keeps it from the network (the rule `plaintextRedisWarnings` uses).
    private var plaintextAMQPWarnings: [String] {
        destinations.compactMap { destination in
            guard case .amqp(let options) = destination.kind, !options.url.usesTLS, !options.url.isLoopback else { return nil }
            return "destination \(destination.name) sends its AMQP password in plaintext to \(options.url.host), which is not this "
                + "machine: anyone on the network path can read it; use amqps:// (TLS)"
        }
    }

    /// Cluster mode without `cluster-key`: whoever can write to the server can have a forged
    /// notification delivered (with `verified: true` and a valid webhook signature). Kept a
    /// warning rather than an error so that configurations from before the key still start.
    private var clusterKeyWarnings: [String] {
        guard let cluster else { return [] }
        if cluster.clusterKeys.isEmpty {
            return ["cluster has no cluster-key: records on the server are not sealed, so anyone who can write to it can have "
                + "forged notifications delivered; set `cluster-key ${STORERELAY_CLUSTER_KEY}` (32+ characters, the same on every instance)"]
        }
        guard cluster.acceptsUnsealed else { return [] }
        return ["cluster-key ... unsealed: records without a seal are still delivered; remove `unsealed` once every instance "
            + "has the key and the records written before it are delivered or dead-lettered"]
    }

    /// The App Store Server API tokens are bearer credentials: over plaintext `http://` they
    /// may cross a network only to this machine (a test double, a local proxy).
    private var plaintextAPIWarnings: [String] {
        guard let url = appleAPI?.url, url.scheme == .http, !url.isLoopback else { return [] }
        return ["apple-api-url \(url) is plaintext http:// to a host that is not this machine: "
            + "the App Store Server API tokens it carries can be read on the way; use https://"]
    }

    /// The cluster server's password over plaintext `redis://` can be read by anyone on the
    /// way, unless the way is this machine's loopback (the rule `plaintextAPIWarnings` uses).
    private var plaintextRedisWarnings: [String] {
        guard let cluster, !cluster.url.usesTLS, cluster.url.password != nil, !cluster.namedHosts.allSatisfy(\.isLoopback) else {
            return []
        }
        let tls = switch cluster.topology {
        case .standalone: "rediss://"
        case .cluster: "rediss-cluster://"
        case .sentinel: "rediss-sentinel://"
        }
        return ["cluster \(cluster.server) sends its password in plaintext to a host that is not this machine: "
            + "anyone on the network path can read it; use \(tls) (TLS)"]
    }

    /// A block as wide as the whole address space lets any client name itself in
    /// `X-Forwarded-For`, and so spread its wrong tokens over addresses of its choosing.
    private var proxyWarnings: [String] {
        trustedProxies.filter { $0.prefixLength == 0 }.map { range in
            "trusted-proxy \(range) trusts every address: any client can choose the address its failed logins count against; "
                + "name the proxies' own addresses"
        }
    }

    /// An extra root is usually a dev or test CA: unless named for it, it should not be able
    /// to sign production notifications.
    private var trustWarnings: [String] {
        guard environments.contains(.production) else { return [] }
        return trustRoots.filter { $0.environments == nil }.map { root in
            "trust-root \(root.path) is trusted for production too; name the environments it is for "
                + "(trust-root \(root.path) sandbox) unless it signs production notifications"
        }
    }

    /// Apple signs every app's notifications with the same chain, so only `app` lines keep
    /// another developer's genuine notifications out, and in production only with the
    /// `apple-id` that Apple's libraries check too.
    private var appWarnings: [String] {
        if apps.isEmpty {
            return ["no app is declared: notifications for every bundle id are accepted and routed; "
                + "declare each app with `app BUNDLE-ID { apple-id N }` to quarantine the others"]
        }
        guard environments.contains(.production) else { return [] }
        return apps.filter { $0.appleId == nil }.map { app in
            "app \(app.bundleId) has no apple-id, so its production V2 notifications' appAppleId is not checked (V1 notifications carry none)"
        }
    }

    private var routeWarnings: [String] {
        var warnings: [String] = []
        for rule in routes.rules {
            for pattern in rule.types ?? [] {
                let place = "\(sourceFile):\(rule.line)"
                guard let subtypes = NotificationCatalog.subtypes(of: pattern.type) else {
                    // A Google Play type (`SUBSCRIPTION_RENEWED`): a `play` app's event.
                    if PlayNotificationTypes.isPlayType(pattern.type) { continue }
                    let hint = Self.closestType(to: pattern.type).map { " (did you mean \($0)?)" } ?? ""
                    warnings.append("\(place): route type \(pattern.type) is not a notification type Apple documents\(hint); "
                        + "it matches only if Apple adds it")
                    continue
                }
                guard let subtype = pattern.subtype else { continue }
                if subtype == RouteRule.TypePattern.noSubtype {
                    if !subtypes.contains(nil) {
                        warnings.append("\(place): \(pattern.type) always has a subtype, so \(pattern) never matches")
                    }
                } else if !subtypes.contains(subtype) {
                    let valid = subtypes.map { $0 ?? RouteRule.TypePattern.noSubtype }.joined(separator: ", ")
                    warnings.append("\(place): \(pattern.type) has no subtype \(subtype) (Apple sends: \(valid)); \(pattern) never matches")
                }
            }
        }
        return warnings
    }

    /// The documented type that shares the longest prefix with `type` (at least 4 letters).
    private static func closestType(to type: String) -> String? {
        let scored = NotificationCatalog.all.map { entry in
            (entry.type, zip(entry.type, type).prefix { $0 == $1 }.count)
        }
        guard let best = scored.max(by: { $0.1 < $1.1 }), best.1 >= 4 else { return nil }
        return best.0
    }
}
