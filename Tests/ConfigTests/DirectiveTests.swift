import Testing
import StoreRelayCore
@testable import StoreRelayConfig

/// Every directive and option, and every default.
@Suite struct DirectiveTests {
    @Test func emptyFileGivesAllDefaults() throws {
        let c = try parsed("# nothing but a comment\n\n")
        #expect(c.listen.description == "0.0.0.0:8080")
        #expect(c.admin.description == "127.0.0.1:9090")
        #expect(c.paths == [NotificationPath(path: "/appstore/notifications", environment: nil)])
        #expect(c.tls == nil)
        #expect(c.adminToken == nil)
        #expect(c.dataDirectory == "./data")
        #expect(c.maxBodySize == 1 << 20)
        #expect(c.readTimeout == .seconds(10))
        #expect(c.headerTimeout == .seconds(5))
        #expect(c.minBodyRate == 1024)
        #expect(c.idleTimeout == .seconds(60))
        #expect(c.maxConnections == 1024)
        #expect(c.maxConnectionsPerAddress == 256)
        #expect(c.dedupeWindow == .seconds(30 * 86_400))
        #expect(c.shutdownGrace == .seconds(10))
        #expect(c.recentEvents == 2_000)
        #expect(c.trustRoots.isEmpty)
        #expect(c.environments == [.production, .sandbox])
        #expect(c.apps.isEmpty)
        #expect(c.sharedSecret == nil)
        #expect(c.destinations.isEmpty)
        #expect(c.routes.rules.isEmpty)
    }

    /// The admin token is the one way into the admin API: a short one is refused, with how
    /// to make a good one.
    @Test func aShortAdminTokenIsRefused() throws {
        expectError("admin-token \(String(repeating: "x", count: 31))\n", .invalidValue, line: 1, column: 13,
                    containing: "31 characters; use at least 32 (for example: openssl rand -hex 32)")
        #expect(try parsed("admin-token \(String(repeating: "x", count: 32))\n").adminToken?.value.count == 32)
    }

    @Test func recentEvents() throws {
        #expect(try parsed("recent-events 50000\n").recentEvents == 50_000)
        #expect(try parsed("recent-events 0\n").recentEvents == 0)
        #expect(try parsed("recent-events 7\n").checkReport().contains("recent-events 7"))
        expectError("recent-events many\n", .invalidValue, line: 1, column: 15)
        expectError("recent-events 1000001\n", .invalidValue, line: 1, column: 15)
    }

    /// `verify-nested yes|no` (issue 31): off by default, so a nested JWS with the
    /// notification's own header is covered by its signature; `yes` verifies each on its own.
    @Test func verifyNested() throws {
        #expect(try parsed("").verifyNested == false)
        #expect(try parsed("verify-nested yes\n").verifyNested == true)
        #expect(try parsed("verify-nested no\n").verifyNested == false)
        #expect(try parsed("").checkReport().contains("Nested signatures: verify-nested no"))
        #expect(try parsed("verify-nested yes\n").checkReport().contains("Nested signatures: verify-nested yes"))
        expectError("verify-nested maybe\n", .invalidValue, line: 1, column: 15, containing: "yes or no")
        expectError("verify-nested YES\n", .invalidValue, line: 1, column: 15)
        expectError("verify-nested\n", .missingArgument, line: 1, column: 14, containing: "verify-nested yes|no")
        expectError("verify-nested yes no\n", .unexpectedArgument, line: 1, column: 19)
        expectError("verify-nested yes\nverify-nested no\n", .duplicate, line: 2, column: 1)
        expectError("verify-nested yes {\n}\n", .invalidBlock, line: 1, column: 19)
    }

    /// `event-log DURATION` (issue 28): how long the event log keeps events; 30d unless told.
    @Test func eventLogRetention() throws {
        #expect(try parsed("").eventLogRetention == .seconds(30 * 86_400))
        #expect(try parsed("event-log 90d\n").eventLogRetention == .seconds(90 * 86_400))
        #expect(try parsed("event-log 1h\n").eventLogRetention == .seconds(3_600))
        #expect(try parsed("").checkReport().contains("event-log 30d"))
        #expect(try parsed("event-log 14d\n").checkReport().contains("event-log 14d"))
        expectError("event-log forever\n", .invalidValue, line: 1, column: 11)
        expectError("event-log 0s\n", .invalidValue, line: 1, column: 11, containing: "shorter than 1h")
        expectError("event-log 59m\n", .invalidValue, line: 1, column: 11, containing: "shorter than 1h")
        expectError("event-log 3651d\n", .invalidValue, line: 1, column: 11, containing: "longer than 3650d")
        expectError("event-log -1d\n", .invalidValue, line: 1, column: 11)
        expectError("event-log\n", .missingArgument, line: 1, column: 10, containing: "event-log DURATION")
        expectError("event-log 1d 2d\n", .unexpectedArgument, line: 1, column: 14)
        expectError("event-log 1d\nevent-log 2d\n", .duplicate, line: 2, column: 1)
    }

    /// `trusted-proxy ADDRESS-OR-CIDR...` (issue 25, point 7): the proxies whose
    /// `X-Forwarded-For` names the admin client; repeatable, none by default, and anything
    /// that is not an address or an exact block is an error where it stands.
    @Test func trustedProxy() throws {
        #expect(try parsed("").trustedProxies.isEmpty)
        let c = try parsed("trusted-proxy 10.0.0.0/8 192.0.2.7\ntrusted-proxy fd00::/8 ::1 ::ffff:203.0.113.9\n")
        #expect(c.trustedProxies.map(\.description) == ["10.0.0.0/8", "192.0.2.7", "fd00::/8", "::1", "203.0.113.9"])
        #expect(c.checkReport().contains("trusted-proxy 10.0.0.0/8 192.0.2.7 fd00::/8 ::1 203.0.113.9"))
        #expect(c.warnings.filter { $0.contains("trusted-proxy") }.isEmpty)
        #expect(try parsed("trusted-proxy 0.0.0.0/0\n").warnings.contains { $0.hasPrefix("trusted-proxy 0.0.0.0/0 trusts every address") })

        expectError("trusted-proxy\n", .missingArgument, line: 1, column: 14, containing: "trusted-proxy ADDRESS-OR-CIDR...")
        expectError("trusted-proxy proxy.internal\n", .invalidValue, line: 1, column: 15, containing: "host names are not resolved")
        expectError("trusted-proxy 10.0.0.256\n", .invalidValue, line: 1, column: 15, containing: "not an IP address")
        expectError("trusted-proxy 10.0.0.0/33\n", .invalidValue, line: 1, column: 15, containing: "expected 0 to 32")
        expectError("trusted-proxy fd00::/129\n", .invalidValue, line: 1, column: 15, containing: "expected 0 to 128")
        expectError("trusted-proxy 10.0.0.0/\n", .invalidValue, line: 1, column: 15, containing: "not a prefix length")
        expectError("trusted-proxy 10.0.0.0/+8\n", .invalidValue, line: 1, column: 15, containing: "not a prefix length")
        expectError("trusted-proxy 10.0.0.1/8\n", .invalidValue, line: 1, column: 15, containing: "expected 10.0.0.0/8")
        expectError("trusted-proxy [::1]\n", .invalidValue, line: 1, column: 15)
        expectError("trusted-proxy fe80::1%eth0\n", .invalidValue, line: 1, column: 15)
        expectError("trusted-proxy 10.0.0.0/8\ntrusted-proxy 10.0.0.0/8\n", .duplicate, line: 2, column: 15)
        // Every bad value on a line is reported, not only the first.
        #expect(errors("trusted-proxy nope 10.0.0.0/8 also-nope\n").map(\.column) == [15, 31])
    }

    /// `trust-root FILE [ENVIRONMENT...]`: a root named for some environments vouches only for
    /// those; without names it is trusted everywhere, which `check` warns about for production.
    @Test func trustRootEnvironments() throws {
        let c = try parsed("app com.a {\napple-id 1\n}\ntrust-root dev.pem sandbox\ntrust-root any.pem\n")
        #expect(c.trustRoots.map(\.environments) == [[.sandbox], nil])
        #expect(c.checkReport().contains("Trust roots: Apple Root CA - G3 (built in), dev.pem (sandbox only), any.pem"))
        #expect(c.warnings == ["trust-root any.pem is trusted for production too; name the environments it is for "
            + "(trust-root any.pem sandbox) unless it signs production notifications"])
        #expect(try parsed("app com.a {\napple-id 1\n}\ntrust-root dev.pem sandbox production\n").warnings.isEmpty)
        #expect(try parsed("app com.a\nenvironments sandbox\ntrust-root any.pem\n").warnings.isEmpty)
        expectError("trust-root dev.pem staging\n", .invalidValue, line: 1, column: 20)
        expectError("trust-root dev.pem sandbox sandbox\n", .duplicate, line: 1, column: 28)
        expectError("trust-root\n", .missingArgument, line: 1, column: 11, containing: "trust-root PEM-FILE [ENVIRONMENT...]")
    }

    @Test func shutdownGrace() throws {
        #expect(try parsed("shutdown-grace 30s\n").shutdownGrace == .seconds(30))
        #expect(try parsed("shutdown-grace 0s\n").shutdownGrace == .zero)
        #expect(try parsed("shutdown-grace 45s\n").checkReport().contains("shutdown-grace 45s"))
        expectError("shutdown-grace 11m\n", .invalidValue, line: 1, column: 16, containing: "longer than 10m")
        expectError("shutdown-grace -1s\n", .invalidValue, line: 1, column: 16, containing: "negative")
        expectError("shutdown-grace later\n", .invalidValue, line: 1, column: 16)
    }

    @Test func dedupeWindow() throws {
        let c = try parsed("dedupe-window 14d\n")
        #expect(c.dedupeWindow == .seconds(14 * 86_400))
        #expect(c.checkReport().contains("dedupe-window 14d"))
        #expect(try parsed("dedupe-window 7d\n").dedupeWindow == .seconds(7 * 86_400))
        expectError("dedupe-window 6d23h\n", .invalidValue, line: 1, column: 15, containing: "at least 7d")
        expectError("dedupe-window soon\n", .invalidValue, line: 1, column: 15)
        expectError("dedupe-window\n", .missingArgument, line: 1, column: 14)
    }

    @Test func connectionLimits() throws {
        let c = try parsed("max-connections 4096\nmax-connections-per-address 4096\n")
        #expect(c.maxConnections == 4096)
        #expect(c.maxConnectionsPerAddress == 4096)
        #expect(c.checkReport().contains("max-connections 4096, max-connections-per-address 4096"))
        for bad in ["0", "-1", "abc", "1.5", "1000001"] {
            expectError("max-connections \(bad)\n", .invalidValue, line: 1, column: 17)
            expectError("max-connections-per-address \(bad)\n", .invalidValue, line: 1, column: 29)
        }
        expectError("max-connections\n", .missingArgument, line: 1, column: 16, containing: "expected max-connections N")
        expectError("max-connections-per-address 1 2\n", .unexpectedArgument, line: 1, column: 31)
    }

    /// The slow-client clocks of the public listener (issue 25): a head's own deadline and a
    /// floor on the body's rate.
    @Test func slowClientLimits() throws {
        let c = try parsed("header-timeout 2s\nmin-body-rate 4KiB/s\n")
        #expect(c.headerTimeout == .seconds(2))
        #expect(c.minBodyRate == 4096)
        #expect(c.checkReport().contains("header-timeout 2s, min-body-rate 4KiB/s"))
        #expect(try parsed("min-body-rate 500\n").minBodyRate == 500)
        let off = try parsed("min-body-rate 0\n")
        #expect(off.minBodyRate == 0)
        #expect(off.checkReport().contains("min-body-rate 0 (off)"))
        #expect(try parsed("\n").checkReport().contains("header-timeout 5s, min-body-rate 1KiB/s"))
        expectError("header-timeout 0s\n", .invalidValue, line: 1, column: 16, containing: "is zero")
        expectError("header-timeout 5\n", .invalidValue, line: 1, column: 16, containing: "needs a unit")
        expectError("min-body-rate fast\n", .invalidValue, line: 1, column: 15, containing: "not a size")
        expectError("min-body-rate -1KiB\n", .invalidValue, line: 1, column: 15, containing: "negative")
        expectError("min-body-rate 1KiB/m\n", .invalidValue, line: 1, column: 15)
        expectError("min-body-rate\n", .missingArgument, line: 1, column: 14, containing: "expected min-body-rate SIZE")
    }

    @Test func topLevelDirectives() throws {
        let c = try parsed("""
            listen [::1]:8443
            path /apple/prod production
            path /apple/sandbox sandbox
            path /apple/any
            tls ./certs/cert.pem /etc/key.pem
            admin localhost:0
            admin-token "s3cr3t token of thirty-two characters"
            data /var/lib/storerelay
            max-body 64KiB
            read-timeout 2s
            idle-timeout 5m
            trust-root ./dev-ca/root.pem
            trust-root extra.pem sandbox xcode
            environments sandbox xcode localtesting production
            shared-secret primary
            """)
        #expect(c.listen == ListenAddress(host: "::1", port: 8443, kind: .ipv6))
        #expect(c.listen.description == "[::1]:8443")
        #expect(c.paths == [
            NotificationPath(path: "/apple/prod", environment: .production),
            NotificationPath(path: "/apple/sandbox", environment: .sandbox),
            NotificationPath(path: "/apple/any", environment: nil),
        ])
        #expect(c.tls == TLSFiles(certificateFile: "./certs/cert.pem", privateKeyFile: "/etc/key.pem"))
        #expect(c.admin == ListenAddress(host: "localhost", port: 0, kind: .hostname))
        #expect(c.adminToken?.value == "s3cr3t token of thirty-two characters")
        #expect(c.dataDirectory == "/var/lib/storerelay")
        #expect(c.maxBodySize == 65536)
        #expect(c.readTimeout == .seconds(2))
        #expect(c.idleTimeout == .seconds(300))
        #expect(c.trustRoots == [TrustRoot(path: "./dev-ca/root.pem"), TrustRoot(path: "extra.pem", environments: [.sandbox, .xcode])])
        #expect(c.environments == [.sandbox, .xcode, .localtesting, .production])
        #expect(c.sharedSecret?.value == "primary")
        #expect(c.notificationPath("/apple/sandbox")?.environment == .sandbox)
        #expect(c.accepts(.xcode))
    }

    @Test func appBlocks() throws {
        let c = try parsed("""
            app com.acme.journal {
                apple-id 1234567890
                shared-secret journal-secret
            }
            app com.acme.other
            app com.acme.third {
            }
            """)
        #expect(c.apps.map(\.bundleId) == ["com.acme.journal", "com.acme.other", "com.acme.third"])
        #expect(c.app(bundleId: "com.acme.journal")?.appleId == 1234567890)
        #expect(c.app(bundleId: "com.acme.journal")?.sharedSecret?.value == "journal-secret")
        #expect(c.app(bundleId: "com.acme.other")?.appleId == nil)
        #expect(c.app(bundleId: "com.acme.missing") == nil)
    }

    @Test func webhookDefaults() throws {
        let c = try parsed("destination hook webhook http://10.0.0.5:8081/in?x=1\nroute * * * -> hook\n")
        let o = try webhook(c, "hook")
        #expect(o.url.scheme == .http && o.url.host == "10.0.0.5" && o.url.port == 8081 && o.url.pathAndQuery == "/in?x=1")
        #expect(!o.url.usesTLS)
        #expect(o.url.hostHeader == "10.0.0.5:8081")
        #expect(o.signingSecret == nil && o.signingKey == nil)
        #expect(o.delivery.format == .normalized)
        #expect(o.delivery.includeRaw == false)
        #expect(o.headers.isEmpty)
        #expect(o.caFile == nil)
        #expect(o.delivery.timeout == .seconds(10))
        #expect(o.delivery.concurrency == 4)
        #expect(o.delivery.maxAttempts == 12)
        #expect(o.delivery.backoffInitial == .seconds(1) && o.delivery.backoffMaximum == .seconds(3600))
        #expect(o.delivery.maxAge == .seconds(72 * 3600))
    }

    @Test func webhookOptions() throws {
        let c = try parsed("""
            destination billing webhook https://billing.internal/appstore {
                signing-secret whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw
                format apple
                include-raw yes
                header X-Team billing
                header Authorization "Bearer abc def"
                ca-file ./internal-ca.pem
                timeout 2500ms
                concurrency 8
                max-attempts 3
                backoff 500ms 2m
                max-age 1d
            }
            """)
        let o = try webhook(c, "billing")
        #expect(o.url.usesTLS && o.url.port == 443 && o.url.host == "billing.internal" && o.url.pathAndQuery == "/appstore")
        #expect(o.url.hostHeader == "billing.internal")
        #expect(o.signingSecret?.value == "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
        #expect(o.signingKey?.count == 24)
        #expect(o.delivery.format == .apple)
        #expect(o.delivery.includeRaw)
        #expect(o.headers == [.init(name: "X-Team", value: "billing"), .init(name: "Authorization", value: "Bearer abc def")])
        #expect(o.caFile == "./internal-ca.pem")
        #expect(o.delivery.timeout == .milliseconds(2500))
        #expect(o.delivery.concurrency == 8)
        #expect(o.delivery.maxAttempts == 3)
        #expect(o.delivery.backoffInitial == .milliseconds(500) && o.delivery.backoffMaximum == .seconds(120))
        #expect(o.delivery.maxAge == .seconds(86400))
    }

    @Test func fileQueueOptionsAndDefaults() throws {
        let c = try parsed("""
            destination ledger file ./data/queues/ledger {
                rotate 1GiB 30m
                compress gzip
            }
            destination plain file queues/plain
            """)
        let ledger = try fileQueue(c, "ledger")
        #expect(ledger.directory == "./data/queues/ledger")
        #expect(ledger.rotateSize == 1 << 30 && ledger.rotateInterval == .seconds(1800))
        #expect(ledger.compression == .gzip)
        let plain = try fileQueue(c, "plain")
        #expect(plain.directory == "queues/plain")
        #expect(plain.rotateSize == 64 << 20 && plain.rotateInterval == .seconds(3600))
        #expect(plain.compression == .none)
        #expect(c.destinations.map(\.name) == ["ledger", "plain"])
    }

    @Test func routeLines() throws {
        let c = try parsed("""
            destination a file ./a
            destination b file ./b
            route production com.x.y * -> a, b
            route production,sandbox * REFUND, REVOKE -> b
            route * com.x.y,com.x.z DID_RENEW/BILLING_RECOVERY,SUBSCRIBED/* -> a ,b
            """)
        let rules = c.routes.rules
        #expect(rules.count == 3)
        #expect(rules[0] == RouteRule(environments: [.production], bundleIds: ["com.x.y"], types: nil, destinations: ["a", "b"], line: 3))
        #expect(rules[1].environments == [.production, .sandbox])
        #expect(rules[1].bundleIds == nil)
        #expect(rules[1].types == [.init(type: "REFUND"), .init(type: "REVOKE")])
        #expect(rules[1].destinations == ["b"])
        #expect(rules[2].environments == nil)
        #expect(rules[2].bundleIds == ["com.x.y", "com.x.z"])
        #expect(rules[2].types == [.init(type: "DID_RENEW", subtype: "BILLING_RECOVERY"), .init(type: "SUBSCRIBED", subtype: nil)])
        #expect(rules[2].destinations == ["a", "b"])
    }

    @Test func routesMayNameDestinationsDeclaredLater() throws {
        let c = try parsed("route * * * -> late\ndestination late file ./late\n")
        #expect(c.routes.destinations(environment: .sandbox, bundleId: "x", type: "TEST", subtype: nil) == ["late"])
    }

    @Test func secretsAreRedactedInDescriptions() throws {
        let c = try parsed("admin-token tok-123-0123456789abcdef0123456789abcdef\nshared-secret sec-456\n")
        #expect("\(c)".contains("tok-123") == false)
        #expect("\(String(reflecting: c))".contains("sec-456") == false)
        #expect(c.adminToken?.description == "<set>")
        let h = try parsed("destination d webhook http://h/ {\n  header Authorization \"Bearer xyz\"\n}\n")
        #expect("\(h)".contains("xyz") == false)
        #expect(try webhook(h, "d").headers.first?.value == "Bearer xyz")
    }
}
