import Foundation
import Testing
import StoreRelayCore
@testable import StoreRelayConfig

/// The example configuration of SPEC.md ("routes.conf"), verbatim, and what it must mean.
@Suite struct SpecExampleTests {
    static let text = #"""
listen 0.0.0.0:8080                      # public listener (Apple posts here)
path   /appstore/notifications           # POST path; both environments may share it, or
                                         #   bind one per environment: path /x/sandbox sandbox
tls    cert.pem key.pem                  # optional: terminate TLS here (else behind a proxy)
admin  127.0.0.1:9090                    # admin listener: API, dead-letter page, /metrics
admin-token ${STORERELAY_ADMIN_TOKEN}    # optional: if absent, one is generated at start
                                         #   into DATA/admin.token (mode 0600)
data   ./data                            # journal, file queues, dead letters
max-body 1MiB
trust-root ./dev-ca/root.pem             # extra trusted roots (tests, simulate); Apple Root
                                         #   CA - G3 is always built in
environments production sandbox          # accepted; xcode and localtesting are opt-in

app com.acme.journal {                   # no app lines: every bundle id is accepted;
                                         #   else other bundle ids are quarantined
    apple-id 1234567890                  # checked on production V2 notifications
    shared-secret ${JOURNAL_SECRET}      # verifies V1 notifications (password field)
}
shared-secret ${PRIMARY_SECRET}          # primary shared secret, for every app

destination billing webhook https://billing.internal/appstore {
    signing-secret ${BILLING_SECRET}     # Standard Webhooks key, whsec_<base64>
    format normalized                    # normalized (default) | apple (original body)
    include-raw no                       # yes: normalized events also carry Apple's body
    header X-Team billing                # extra request headers, repeatable
    ca-file ./internal-ca.pem            # also trust this CA for this destination's HTTPS
    timeout 10s
    concurrency 8                        # attempts in flight to this destination
    max-attempts 12
    backoff 1s 1h                        # exponential with jitter, from..to
    max-age 72h                          # then dead-letter, however many attempts
}
destination ledger file ./data/queues/ledger {
    rotate 64MiB 1h                      # close a segment at either bound
    compress gzip                        # closed segments become .jsonl.gz
}

# route  environment  app               type[/subtype]       ->  destinations
route    production   com.acme.journal  *                    ->  billing, ledger
route    production   *                 REFUND,REVOKE        ->  billing
route    sandbox      *                 *                    ->  ledger
route    *            *                 TEST                 ->  ledger
"""#

    static let environment = [
        "STORERELAY_ADMIN_TOKEN": "admin-token-value-0123456789abcdef",
        "JOURNAL_SECRET": "journal-secret-value",
        "PRIMARY_SECRET": "primary-secret-value",
        "BILLING_SECRET": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
    ]

    @Test func specExampleParses() throws {
        let c = try parsed(Self.text, environment: Self.environment)
        #expect(c.listen.description == "0.0.0.0:8080")
        #expect(c.paths == [NotificationPath(path: "/appstore/notifications")])
        #expect(c.tls == TLSFiles(certificateFile: "cert.pem", privateKeyFile: "key.pem"))
        #expect(c.admin.description == "127.0.0.1:9090")
        #expect(c.adminToken?.value == "admin-token-value-0123456789abcdef")
        #expect(c.dataDirectory == "./data")
        #expect(c.maxBodySize == 1 << 20)
        #expect(c.trustRoots == [TrustRoot(path: "./dev-ca/root.pem")])
        #expect(c.environments == [.production, .sandbox])
        #expect(c.apps == [AppConfiguration(bundleId: "com.acme.journal", appleId: 1234567890, sharedSecret: ConfigSecret("journal-secret-value"))])
        #expect(c.sharedSecret?.value == "primary-secret-value")
        #expect(c.destinations.map(\.name) == ["billing", "ledger"])
        let billing = try webhook(c, "billing")
        #expect(billing.url.absoluteString == "https://billing.internal/appstore")
        #expect(billing.signingSecret?.value == "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
        #expect(billing.delivery.format == .normalized && !billing.delivery.includeRaw)
        #expect(billing.headers == [.init(name: "X-Team", value: "billing")])
        #expect(billing.caFile == "./internal-ca.pem")
        #expect(billing.delivery.timeout == .seconds(10) && billing.delivery.concurrency == 8 && billing.delivery.maxAttempts == 12)
        #expect(billing.delivery.backoffInitial == .seconds(1) && billing.delivery.backoffMaximum == .seconds(3600))
        #expect(billing.delivery.maxAge == .seconds(72 * 3600))
        let ledger = try fileQueue(c, "ledger")
        #expect(ledger.directory == "./data/queues/ledger" && ledger.rotateSize == 64 << 20)
        #expect(ledger.rotateInterval == .seconds(3600) && ledger.compression == .gzip)
    }

    @Test func specExampleRouteTable() throws {
        let t = try parsed(Self.text, environment: Self.environment).routes
        #expect(t.rules.map(\.columnsDescription) == [
            ["production", "com.acme.journal", "*"],
            ["production", "*", "REFUND,REVOKE"],
            ["sandbox", "*", "*"],
            ["*", "*", "TEST"],
        ])
        func route(_ environment: AppStoreEnvironment, _ bundle: String, _ type: String, _ subtype: String? = nil) -> [String] {
            t.destinations(environment: environment, bundleId: bundle, type: type, subtype: subtype)
        }
        #expect(route(.production, "com.acme.journal", "DID_RENEW", "BILLING_RECOVERY") == ["billing", "ledger"])
        #expect(route(.production, "com.acme.journal", "REFUND") == ["billing", "ledger"])
        #expect(route(.production, "com.acme.other", "REFUND") == ["billing"])
        #expect(route(.production, "com.acme.other", "REVOKE") == ["billing"])
        #expect(route(.production, "com.acme.other", "DID_RENEW") == [])
        #expect(route(.production, "com.acme.other", "TEST") == ["ledger"])
        #expect(route(.sandbox, "com.acme.journal", "REFUND") == ["ledger"])
        #expect(route(.xcode, "com.acme.journal", "TEST") == ["ledger"])
        #expect(route(.xcode, "com.acme.journal", "SUBSCRIBED") == [])
    }

    @Test func specExampleNeedsItsVariables() {
        let found = errors(Self.text, environment: [:])
        #expect(found.count == 4)
        #expect(found.allSatisfy { $0.code == .undefinedVariable })
    }

    @Test func checkReportShowsTheResolvedConfigurationWithoutSecrets() throws {
        var environment = Self.environment
        let c = try parsed(Self.text + "\ndestination spare webhook https://h/x?token=leak\n", environment: environment)
        let report = c.checkReport()
        environment["URL_TOKEN"] = "leak"
        for secret in environment.values {
            #expect(!report.contains(secret), "report leaks \(secret)")
        }
        for expected in [
            "public  0.0.0.0:8080  TLS with cert.pem and key.pem",
            "admin   127.0.0.1:9090  token <set>",
            "max-body 1MiB, read-timeout 10s, idle-timeout 1m",
            "POST /appstore/notifications  any accepted environment",
            "Accepted environments: production, sandbox",
            "Trust roots: Apple Root CA - G3 (built in), ./dev-ca/root.pem",
            "Primary shared secret: <set>",
            "com.acme.journal  apple-id 1234567890, shared-secret <set>",
            "billing  webhook https://billing.internal/appstore",
            "signing-secret <set> (sha256:f74e1720), format normalized, include-raw no",
            "timeout 10s, concurrency 8, max-attempts 12, backoff 1s 1h, max-age 3d",
            "ca-file ./internal-ca.pem",
            "header X-Team <set>",
            "ledger  file ./data/queues/ledger",
            "rotate 64MiB 1h, compress gzip",
            "spare  webhook https://h/x?<redacted>  (no route names it)",
        ] {
            #expect(report.contains(expected), "missing: \(expected)\n\(report)")
        }
        // Routes in file order, each with its destinations.
        let routeLines = report.split(separator: "\n").filter { $0.contains(" -> ") }
        #expect(routeLines.count == 4)
        #expect(routeLines[0].contains("production") && routeLines[0].contains("com.acme.journal") && routeLines[0].hasSuffix("-> billing, ledger"))
        #expect(routeLines[1].contains("REFUND,REVOKE") && routeLines[1].hasSuffix("-> billing"))
        #expect(routeLines[3].contains("TEST") && routeLines[3].hasSuffix("-> ledger"))
    }
}
