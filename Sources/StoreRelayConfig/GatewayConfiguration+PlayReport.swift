/// The Google Play part of `storerelay check`'s report.
extension GatewayConfiguration {
    /// "Google Play apps": each package with its push audience and account, whether it is
    /// enriched, and where keys and the API are reached. Empty when no `play` block is declared.
    func playReport() -> [String] {
        guard !playApps.isEmpty || hasPlayPath else { return [] }
        var out = ["", "Google Play apps"]
        for app in playApps {
            out.append("  \(app.packageName)  push-audience \(app.pushAudience), push-account \(app.pushAccount)")
            out.append("    service-account \(app.serviceAccountFile.map { "\($0) (events enriched from the Developer API)" } ?? "<not set>: events are not enriched")")
        }
        let certs = googleCerts.map { $0.url.description + ($0.caFile.map { " (ca-file \($0))" } ?? "") } ?? Self.defaultGoogleCertsURL
        out.append("  push-token keys: \(certs)")
        if let api = googleAPI {
            out.append("  Play Developer API: \(api.url)\(api.caFile.map { " (ca-file \($0))" } ?? "")")
        }
        return out
    }
}
