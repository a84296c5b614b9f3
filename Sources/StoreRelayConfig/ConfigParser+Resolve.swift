import StoreRelayCore

/// The checks that need the whole file, then the defaults: the last step of parsing.
extension ConfigParser {
    mutating func resolve() -> Result<GatewayConfiguration, ConfigErrors> {
        let accepted = environments ?? GatewayConfiguration.Defaults.environments
        for bound in boundPaths where !accepted.contains(bound.environment) {
            report(.invalidValue, at: bound.token,
                   "path '\(bound.path)' is bound to environment '\(bound.environment.rawValue)', which is not accepted (expected one of 'environments': \(accepted.map(\.rawValue).joined(separator: ", ")))")
        }
        for (app, line) in reconcileWithoutKey {
            report(.missingArgument, line: line, column: 1,
                   "app '\(app)' has 'reconcile' but no 'api-key' (expected api-key KEY-FILE KEY-ID ISSUER-ID: Apple's API needs it)")
        }
        if !playDeclared {
            for token in playPathTokens {
                report(.invalidValue, at: token, "a 'play' path needs at least one play block (expected \(Self.playSyntax)): pushes are verified against its push-audience and push-account")
            }
        }
        let declared = destinations.map(\.name)
        for items in routeDestinationItems {
            for item in items where destinationLines[item.text] == nil {
                let known = declared.isEmpty ? "no destination is declared" : "declared: \(declared.joined(separator: ", "))"
                report(.unknownDestination, line: item.line, column: item.column, "route names unknown destination '\(item.text)' (\(known))")
            }
        }
        if let token = operationalEventsToken, destinationLines[token.text] == nil {
            let known = declared.isEmpty ? "no destination is declared" : "declared: \(declared.joined(separator: ", "))"
            report(.unknownDestination, at: token, "operational-events names unknown destination '\(token.text)' (\(known))")
        }
        let listen = listen ?? GatewayConfiguration.Defaults.listen
        let admin = admin ?? GatewayConfiguration.Defaults.admin
        if listen.port != 0, listen == admin, let line = seenDirectives["admin"] ?? seenDirectives["listen"] {
            report(.invalidValue, line: line, column: 1, "the admin listener and the public listener are both \(listen) (expected two different addresses)")
        }
        guard errors.isEmpty else {
            // File order, whatever order the checks ran in; the sort is stable.
            let sorted = errors.enumerated().sorted { a, b in
                (a.element.line, a.element.column, a.offset) < (b.element.line, b.element.column, b.offset)
            }.map(\.element)
            return .failure(ConfigErrors(sorted))
        }
        var configuration = GatewayConfiguration(
            sourceFile: file,
            listen: listen,
            paths: paths.isEmpty ? [NotificationPath(path: GatewayConfiguration.Defaults.path)] : paths,
            tls: tls,
            admin: admin,
            adminToken: adminToken,
            dataDirectory: dataDirectory ?? GatewayConfiguration.Defaults.dataDirectory,
            maxBodySize: maxBodySize ?? GatewayConfiguration.Defaults.maxBodySize,
            readTimeout: readTimeout ?? GatewayConfiguration.Defaults.readTimeout,
            headerTimeout: headerTimeout ?? GatewayConfiguration.Defaults.headerTimeout,
            minBodyRate: minBodyRate ?? GatewayConfiguration.Defaults.minBodyRate,
            idleTimeout: idleTimeout ?? GatewayConfiguration.Defaults.idleTimeout,
            maxConnections: maxConnections ?? GatewayConfiguration.Defaults.maxConnections,
            maxConnectionsPerAddress: maxConnectionsPerAddress ?? GatewayConfiguration.Defaults.maxConnectionsPerAddress,
            dedupeWindow: dedupeWindow ?? GatewayConfiguration.Defaults.dedupeWindow,
            shutdownGrace: shutdownGrace ?? GatewayConfiguration.Defaults.shutdownGrace,
            recentEvents: recentEvents ?? GatewayConfiguration.Defaults.recentEvents,
            trustRoots: trustRoots,
            environments: accepted,
            apps: apps,
            sharedSecret: sharedSecret,
            destinations: destinations,
            routes: RouteTable(rules: routes))
        configuration.appleAPI = appleAPI
        configuration.playApps = playApps
        configuration.googleCerts = googleCerts
        configuration.googleAPI = googleAPI
        configuration.tracing = tracing
        configuration.eventLogRetention = eventLogRetention ?? GatewayConfiguration.Defaults.eventLogRetention
        configuration.trustedProxies = trustedProxies
        configuration.operationalEvents = operationalEvents
        if var cluster {
            if !clusterNamesDedupeWindow { cluster.dedupeWindow = dedupeWindow ?? ClusterConfiguration.defaultDedupeWindow }
            configuration.cluster = cluster
        }
        return .success(configuration)
    }
}
