/// The repository's own `routes.conf`, built into the binary: `storerelay serve` runs with
/// it when no configuration file exists. It accepts every app in production and sandbox and
/// writes every event to file queues under ./data, so it needs no other service.
///
/// A test checks that this text equals the top-level `routes.conf` byte for byte: edit the
/// file, then paste it here.
public enum DefaultConfiguration {
    /// The text of the top-level `routes.conf`.
    public static let text = #"""
# StoreRelay default configuration.
#
# This file is both the repository's example and the configuration built into the binary:
# `storerelay serve` with no routes.conf runs exactly this. It needs no other service: every
# notification, from any app, is verified, journaled and written to a file queue under ./data.
#
# Syntax: one directive per line, `#` starts a comment, `${NAME}` reads an environment
# variable, sizes take KiB MiB GiB and durations ms s m h d. `storerelay check` prints the
# resolved configuration. See SPEC.md, section routes.conf, for every directive.

# Public listener: point App Store Connect's notification URL here (through a TLS proxy,
# or add `tls cert.pem key.pem`).
listen 0.0.0.0:8080
path   /appstore/notifications

# Admin listener (API, dead-letter page, /metrics). Its bearer token is generated at start
# into ./data/admin.token unless `admin-token ${STORERELAY_ADMIN_TOKEN}` is given.
admin  127.0.0.1:9090

# Journal, file queues and dead letters.
data   ./data
max-body 1MiB

# Accepted environments; xcode and localtesting are opt-in.
environments production sandbox

# Trust the dev CA of `storerelay simulate` (./data/dev-ca, created at first start) for
# sandbox notifications only, so `storerelay simulate` reaches this gateway out of the box.
# Production notifications are verified against Apple Root CA - G3 alone, whatever this
# says. Delete the line where nobody simulates.
trust-root ./data/dev-ca/root.pem sandbox

# No `app` block: every bundle id is accepted. Declare apps to quarantine all others:
#   app com.example.app {
#       apple-id 1234567890
#       # Recover what Apple failed to deliver from its Notification History
#       # (README "Recovering missed notifications"):
#       api-key ./SubscriptionKey_KEYID.p8 KEYID ISSUER-ID
#       reconcile every 1h overlap 2h
#   }

# One file queue per environment: JSON-lines segments that any consumer can tail,
# read and delete once closed.
destination production file ./data/queues/production {
    rotate 64MiB 1h
    compress none
}
destination sandbox file ./data/queues/sandbox {
    rotate 64MiB 1h
    compress none
}

# route  environment  app  type  ->  destinations
route    production   *    *     ->  production
route    sandbox      *    *     ->  sandbox

"""#

    /// The default configuration, parsed.
    public static func configuration() -> GatewayConfiguration {
        do {
            return try GatewayConfiguration.parse(text: text, fileName: "routes.conf (built in)", environment: [:])
        } catch {
            preconditionFailure("the built-in routes.conf does not parse: \(error)")
        }
    }
}
