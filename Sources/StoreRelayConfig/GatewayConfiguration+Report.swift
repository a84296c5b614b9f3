import StoreRelayNet

/// The text `storerelay check` prints: the resolved configuration, every default filled in.
///
/// Secrets are shown as `<set>`, never their value, and so are header values (they often
/// carry credentials) and URL queries, so the output can be pasted into a ticket or a CI log.
extension GatewayConfiguration {
    public func checkReport() -> String {
        var out: [String] = ["Configuration \(sourceFile): OK", ""]
        out.append("Listeners")
        let tlsText = tls.map { "TLS with \($0.certificateFile) and \($0.privateKeyFile)" } ?? "plain HTTP (TLS terminated by a proxy, if any)"
        out.append("  public  \(listen)  \(tlsText)")
        out.append("  admin   \(admin)  token \(adminToken == nil ? "generated at start into \(dataDirectory)/admin.token" : "<set>")")
        if !trustedProxies.isEmpty {
            out.append("  trusted-proxy \(trustedProxies.map(\.description).joined(separator: " ")) (X-Forwarded-For names the admin client)")
        }
        out.append("  max-body \(ConfigFormat.size(maxBodySize)), read-timeout \(ConfigFormat.duration(readTimeout)), idle-timeout \(ConfigFormat.duration(idleTimeout))")
        let rate = minBodyRate == 0 ? "0 (off)" : "\(ConfigFormat.size(minBodyRate))/s"
        out.append("  header-timeout \(ConfigFormat.duration(headerTimeout)), min-body-rate \(rate)")
        out.append("  max-connections \(maxConnections), max-connections-per-address \(maxConnectionsPerAddress) (IPv6: per /64)")
        out.append("  dedupe-window \(ConfigFormat.duration(dedupeWindow)), shutdown-grace \(ConfigFormat.duration(shutdownGrace)), recent-events \(recentEvents), event-log \(ConfigFormat.duration(eventLogRetention))")
        out.append("")
        out.append("Paths")
        let width = paths.map(\.path.count).max() ?? 0
        for path in paths {
            let bound = path.kind == .googlePlay ? "Google Play pushes (Pub/Sub, token-verified)"
                : path.environment.map { "\($0.rawValue) only" } ?? "any accepted environment"
            out.append("  POST \(Self.pad(path.path, width))  \(bound)")
        }
        out.append("")
        out.append("Accepted environments: \(environments.map(\.rawValue).joined(separator: ", "))")
        out.append("Data directory: \(dataDirectory)\(Self.resolved(dataDirectory))")
        if let cluster {
            let password = cluster.url.password == nil ? "no password" : "password <set>"
            out.append("Cluster mode: \(cluster.server) (\(password))\(cluster.caFile.map { ", ca-file \($0)" } ?? "")")
            if let topology = cluster.topologyReport { out.append(topology) }
            if let identity = cluster.clientCertificate {
                out.append("  client-cert \(identity.certificateFile) \(identity.privateKeyFile) (mutual TLS)")
            }
            out.append("  instance-id \(cluster.instanceId ?? "<hostname-pid at start>"), dedupe-window \(ConfigFormat.duration(cluster.dedupeWindow)), claim-after \(ConfigFormat.duration(cluster.claimAfter))")
            out.append("  wait-replicas \(cluster.waitReplicas), wait-timeout \(ConfigFormat.duration(cluster.waitTimeout)), require-aof \(cluster.requireAOF ? "yes" : "no"), require-noeviction \(cluster.requireNoEviction ? "yes" : "no")")
            let sealing = cluster.clusterKeys.isEmpty ? "<not set>: records are not sealed"
                : "<set>" + (cluster.clusterKeys.count > 1 ? " (and a second key that opens)" : "") + (cluster.acceptsUnsealed ? ", unsealed records accepted" : "")
            out.append("  cluster-key \(sealing)")
        } else {
            out.append("Single-node mode: the journal in \(dataDirectory)/journal")
        }
        out.append("Trust roots: \((["Apple Root CA - G3 (built in)"] + trustRoots.map(\.description)).joined(separator: ", "))")
        if let tracing {
            out.append("Tracing: spans as OTLP/HTTP JSON to \(tracing.url)\(tracing.caFile.map { " (ca-file \($0))" } ?? "")")
        }
        out.append("Primary shared secret: \(sharedSecret == nil ? "<not set>" : "<set>")")
        out.append("")
        out.append("Apps")
        if apps.isEmpty { out.append("  every bundle id is accepted (no app is declared)") }
        for app in apps {
            let appleId = app.appleId.map { "apple-id \($0)" } ?? "apple-id not checked"
            out.append("  \(app.bundleId)  \(appleId), shared-secret \(app.sharedSecret == nil ? "<not set>" : "<set>")")
            if let key = app.apiKey { out.append("    api-key \(key.path) (key id \(key.keyId), issuer \(key.issuerId))") }
            if let schedule = app.reconcile {
                let reconciled = environments.filter { $0 == .production || $0 == .sandbox }.map(\.rawValue).joined(separator: " and ")
                out.append("    reconcile every \(ConfigFormat.duration(schedule.every)) overlap \(ConfigFormat.duration(schedule.overlap)) (\(reconciled))")
            }
        }
        if apps.contains(where: { $0.apiKey != nil }) {
            let api = appleAPI.map { $0.url.description + ($0.caFile.map { " (ca-file \($0))" } ?? "") }
                ?? "https://api.storekit.apple.com, https://api.storekit-sandbox.apple.com"
            out.append("  App Store Server API: \(api)")
        }
        out.append(contentsOf: playReport())
        out.append("")
        out.append("Destinations")
        if destinations.isEmpty { out.append("  none") }
        let routed = Set(routes.destinationNames)
        for destination in destinations {
            let unused = routed.contains(destination.name) ? ""
                : destination.name == operationalEvents.destination ? "  (operational events only)" : "  (no route names it)"
            switch destination.kind {
            case .webhook(let options):
                out.append("  \(destination.name)  webhook \(Self.redactedURL(options.url))\(unused)")
                out.append("    signing-secret \(Self.describeSigning(options)), \(Self.describeBody(options.delivery))")
                out.append("    \(Self.describe(options.delivery))")
                if let caFile = options.caFile { out.append("    ca-file \(caFile)") }
                for header in options.headers { out.append("    header \(header.name) <set>") }
            case .file(let options):
                out.append("  \(destination.name)  file \(options.directory)\(unused)")
                out.append("    rotate \(ConfigFormat.size(options.rotateSize)) \(ConfigFormat.duration(options.rotateInterval)), compress \(options.compression.rawValue)")
            case .redisStream(let options):
                // RedisURL's description hides the password.
                out.append("  \(destination.name)  redis-stream \(options.url)\(unused)")
                let trim = options.maxLength.map { "max-length \($0)" } ?? "max-length none"
                out.append("    stream \(options.stream), \(trim), \(Self.describeBody(options.delivery))")
                out.append("    \(Self.describe(options.delivery))")
                if let caFile = options.caFile { out.append("    ca-file \(caFile)") }
            case .nats(let options):
                out.append("  \(destination.name)  nats \(options.url)\(unused)")
                let auth = options.token != nil ? "token <set>"
                    : options.user.map { "user \($0), password <set>" } ?? "no authentication"
                out.append("    subject \(options.subject), \(auth), \(Self.describeBody(options.delivery))")
                out.append("    \(Self.describe(options.delivery))")
            case .amqp(let options):
                out.append("  \(destination.name)  amqp \(Self.describe(options.url))\(unused)")
                let exchange = options.exchange.isEmpty ? "\"\" (default)" : options.exchange
                out.append("    exchange \(exchange), routing-key \(options.routingKey), \(Self.describeBody(options.delivery))")
                let heartbeat = options.heartbeat == .zero ? "0 (off)" : ConfigFormat.duration(options.heartbeat)
                out.append("    \(Self.describe(options.delivery)), heartbeat \(heartbeat)")
                if let caFile = options.caFile { out.append("    ca-file \(caFile)") }
            case .sqs(let options):
                out.append("  \(destination.name)  sqs \(options.queueURL.absoluteString)\(options.isFIFO ? " (FIFO)" : "")\(unused)")
                let source = options.credentialsFromEnvironment ? "from AWS_ACCESS_KEY_ID" : "from the block"
                let token = options.sessionToken == nil ? "" : ", session-token <set>"
                out.append("    region \(options.region), access-key-id \(options.accessKeyId) (\(source)), secret-access-key <set>\(token)")
                out.append("    \(Self.describeBody(options.delivery)), \(Self.describe(options.delivery))")
                if let endpoint = options.endpoint { out.append("    endpoint \(endpoint.absoluteString)") }
                if let caFile = options.caFile { out.append("    ca-file \(caFile)") }
            }
        }
        out.append("")
        out.append(operationalEventsReport)
        if !referencedFiles.isEmpty {
            out.append("")
            out.append("Files (relative paths are relative to the working directory, \(ConfigPaths.absolute(".")))")
            for file in referencedFiles {
                let note = file.createdAtStart ? "  (the dev CA of `storerelay simulate`; serve creates it when missing)" : ""
                out.append("  \(file.directive)  \(file.absolutePath)\(note)")
            }
        }
        out.append("")
        out.append("Routes (every matching route adds its destinations; no match: dead letter 'unrouted')")
        if routes.rules.isEmpty { out.append("  none: every event is dead-lettered as unrouted") }
        let rows = routes.rules.map { rule in [rule.line > 0 ? "line \(rule.line)" : ""] + rule.columnsDescription }
        let widths = (0..<4).map { column in rows.map { $0[column].count }.max() ?? 0 }
        for (rule, row) in zip(routes.rules, rows) {
            let cells = zip(row, widths).map { Self.pad($0, $1) }.joined(separator: "  ")
            out.append("  \(cells)  -> \(rule.destinations.joined(separator: ", "))")
        }
        return out.joined(separator: "\n") + "\n"
    }

    /// One line: where the gateway's own events go, and the thresholds that fire them.
    private var operationalEventsReport: String {
        let ops = operationalEvents
        let target = ops.destination.map { "-> \($0)" } ?? "<not set>: none are sent"
        return "Operational events \(target); intake-silence \(ConfigFormat.duration(ops.intakeSilence)), disk-low \(ConfigFormat.size(ops.diskLow))"
    }

    /// ` (/abs/path)` when `path` is relative, so the report says where it really is.
    private static func resolved(_ path: String) -> String {
        path.hasPrefix("/") ? "" : " (\(ConfigPaths.absolute(path)))"
    }

    private static func pad(_ text: String, _ width: Int) -> String {
        text + String(repeating: " ", count: max(0, width - text.count))
    }

    /// `<not set>`, or the fingerprint of each active secret, labelled: `new sha256:1a2b3c4d,
    /// old sha256:...` while two rotate. Never the secret.
    static func describeSigning(_ options: WebhookOptions) -> String {
        let fingerprints = options.signingSecretFingerprints
        switch fingerprints.count {
        case 0: return "<not set>"
        case 1: return "<set> (\(fingerprints[0]))"
        default: return "<set> (new \(fingerprints[0]), old \(fingerprints[1]): both sign)"
        }
    }

    /// `format normalized, include-raw no`: what a destination's messages hold.
    static func describeBody(_ options: DeliveryOptions) -> String {
        "format \(options.format.rawValue), include-raw \(options.includeRaw ? "yes" : "no")"
    }

    /// `timeout 10s, concurrency 4, ...`: how long and how often a destination is tried.
    static func describe(_ options: DeliveryOptions) -> String {
        "timeout \(ConfigFormat.duration(options.timeout)), concurrency \(options.concurrency), "
            + "max-attempts \(options.maxAttempts), backoff \(ConfigFormat.duration(options.backoffInitial)) "
            + "\(ConfigFormat.duration(options.backoffMaximum)), max-age \(ConfigFormat.duration(options.maxAge)), "
            + "rate \(options.rate.map { "\($0) (burst \($0.burst))" } ?? "unlimited")"
            + (options.order == .none ? "" : ", order \(options.order.rawValue)")
    }

    /// The broker without its password: `amqp://user@host:5672/%2f (password <set>)`.
    private static func describe(_ url: AMQPURL) -> String {
        let host = url.hostKind == .ipv6 ? "[\(url.host)]" : url.host
        let vhost = url.virtualHost.split(separator: "/", omittingEmptySubsequences: false).joined(separator: "%2f")
        return "\(url.usesTLS ? "amqps" : "amqp")://\(url.user)@\(host):\(url.port)/\(vhost) (password <set>)"
    }

    /// The URL without its query, which may carry a token.
    private static func redactedURL(_ url: WebhookURL) -> String {
        guard let query = url.absoluteString.firstIndex(of: "?") else { return url.absoluteString }
        return url.absoluteString[..<query] + "?<redacted>"
    }
}
