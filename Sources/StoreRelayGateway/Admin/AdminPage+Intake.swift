import StoreRelayCore

/// The intake and cluster panels: whether Apple is still sending, and (in cluster mode) the
/// instances, the server and its durability — what an empty dead-letter list cannot say.
extension AdminPage {
    /// Received, quarantined and rejected per app and environment over 24 hours, and when
    /// the last arrived. The figures are this instance's since it started.
    static func intakePanel(_ model: Model) -> String {
        let scope = model.cluster == nil ? "since start, at most 24 h" : "this instance, since its start, at most 24 h"
        var out = "<section><h2>Intake <small class=\"muted\">(\(scope))</small></h2>\n<table><tr><th>App</th><th>Env</th>"
            + "<th>Received</th><th>Quarantined</th><th>Rejected</th><th>Last received</th></tr>\n"
        for figures in model.intake {
            let last = figures.lastReceived.map { "<span title=\"\(h($0.iso8601))\">\(h(age($0, model.now))) ago</span>" }
                ?? "<span class=\"muted\">never</span>"
            out += "<tr><td>\(h(figures.app))</td><td>\(h(figures.environment))</td><td class=\"num\">\(figures.received)</td>"
                + "<td class=\"num\">\(count(figures.quarantined))</td><td class=\"num\">\(count(figures.rejected))</td>"
                + "<td>\(last)</td></tr>\n"
        }
        if model.intake.isEmpty {
            out += "<tr><td colspan=\"6\" class=\"muted\">Nothing received yet. Check the URL in App Store Connect, or run a probe.</td></tr>\n"
        }
        return out + "</table></section>"
    }

    /// A count that should be 0, in red when it is not.
    private static func count(_ value: Int) -> String {
        value == 0 ? "0" : "<span class=\"bad\">\(value)</span>"
    }

    /// Cluster mode: the server (connected, answering, durable), its durability settings, and
    /// the live instances, this one marked. Absent in single-node mode.
    static func clusterPanel(_ model: Model) -> String {
        guard let cluster = model.cluster else { return "" }
        let me = cluster["instanceId"]?.stringValue ?? ""
        var out = "<section><h2>Cluster <small class=\"muted\">(shared by every instance)</small></h2>\n<table>"
        let connected = cluster["connected"]?.boolValue == true && cluster["answering"]?.boolValue != false
        var server = "<code>\(h(cluster["server"]?.stringValue ?? ""))</code> "
            + (connected ? "<span class=\"ok\">connected</span>" : "<span class=\"bad\">not connected</span>")
        if let node = cluster["node"]?.stringValue { server += " <span class=\"muted\">via \(h(node))</span>" }
        if let error = cluster["lastError"]?.stringValue, !connected { server += " <span class=\"bad\">\(h(error))</span>" }
        out += "<tr><th>Server</th><td class=\"err\">\(server)</td></tr>\n"
        let problem = cluster["durabilityProblem"]?.stringValue
        var durability = problem.map { "<span class=\"bad\">\(h($0))</span>" } ?? "<span class=\"ok\">durable</span>"
        let settings = cluster["durability"]?.objectValue?.members.map { "\(h($0.key)) \(h($0.value.stringValue ?? ""))" } ?? []
        if !settings.isEmpty { durability += " <span class=\"muted\">(\(settings.joined(separator: ", ")))</span>" }
        out += "<tr><th>Durability</th><td class=\"err\">\(durability); wait-replicas \(cluster["waitReplicas"]?.int64Value ?? 0)"
            + "; integrity \(h(cluster["integrity"]?.stringValue ?? "off"))</td></tr>\n"
        let instances = cluster["instances"]?.arrayValue ?? []
        let names = instances.map { instance -> String in
            let id = instance["id"]?.stringValue ?? ""
            let seen = instance["lastSeen"]?.stringValue.flatMap(Timestamp.init(iso8601:)).map { " seen \(h(age($0, model.now))) ago" } ?? ""
            return "<code>\(h(id))</code>" + (id == me ? " <span class=\"tag ok\">this instance</span>" : "")
                + "<span class=\"muted\">\(seen)</span>"
        }
        out += "<tr><th>Instances (\(instances.count))</th><td class=\"err\">\(names.isEmpty ? "<span class=\"bad\">none live</span>" : names.joined(separator: "<br>"))</td></tr>\n"
        return out + "</table></section>"
    }
}
