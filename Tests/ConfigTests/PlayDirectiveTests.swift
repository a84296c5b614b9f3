import Testing
import StoreRelayCore
@testable import StoreRelayConfig

/// `play`, `path PATH play`, `google-certs-url` and `google-api-url` (SPEC "Google Play
/// real-time developer notifications").
@Suite struct PlayDirectiveTests {
    static let block = """
        play com.acme.journal {
            push-audience https://relay.acme.com/play
            push-account pubsub-push@acme-prod.iam.gserviceaccount.com
            service-account ./play-sa.json
        }
        path /play/notifications play
        """

    /// Exactly one error, of `code`, on `line`, whose message holds `fragment`.
    func expectOne(_ text: String, _ code: ConfigError.Code, line: Int, _ fragment: String,
                   sourceLocation: SourceLocation = #_sourceLocation) {
        let found = errors(text)
        #expect(found.count == 1, "expected one error, got:\n\(found.map(\.description).joined(separator: "\n"))", sourceLocation: sourceLocation)
        guard let error = found.first else { return }
        #expect(error.code == code, "code of: \(error)", sourceLocation: sourceLocation)
        #expect(error.line == line, "line of: \(error)", sourceLocation: sourceLocation)
        #expect(error.message.contains(fragment), "message of: \(error)", sourceLocation: sourceLocation)
    }

    @Test func theSpecExampleParses() throws {
        let c = try parsed(Self.block + """

            google-certs-url https://127.0.0.1:8443/certs ca-file ./test-ca.pem
            google-api-url http://127.0.0.1:9000
            route * com.acme.journal SUBSCRIPTION_RENEWED -> q
            route * com.acme_app.free ONE_TIME_PRODUCT_PURCHASED -> q
            destination q file ./data/q
            """)
        let app = try #require(c.playApp(packageName: "com.acme.journal"))
        #expect(app.pushAudience == "https://relay.acme.com/play")
        #expect(app.pushAccount == "pubsub-push@acme-prod.iam.gserviceaccount.com")
        #expect(app.serviceAccountFile == "./play-sa.json")
        #expect(c.paths.map(\.path) == ["/play/notifications"])
        #expect(c.paths[0].kind == .googlePlay && c.paths[0].environment == nil)
        #expect(c.hasPlayPath)
        #expect(c.googleCerts?.url.description == "https://127.0.0.1:8443/certs")
        #expect(c.googleCerts?.caFile == "./test-ca.pem")
        #expect(c.googleAPI?.url.description == "http://127.0.0.1:9000")
        #expect(c.googleAPI?.caFile == nil)
        #expect(c.routes.destinations(environment: .production, bundleId: "com.acme.journal", type: "SUBSCRIPTION_RENEWED", subtype: nil) == ["q"])
        #expect(c.referencedFiles.contains(ReferencedFile(directive: "play com.acme.journal service-account", path: "./play-sa.json", isPrivateKey: true)))
        #expect(c.referencedFiles.contains { $0.directive == "google-certs-url ca-file" && $0.path == "./test-ca.pem" })
        let report = c.checkReport()
        #expect(report.contains("POST /play/notifications  Google Play pushes"))
        #expect(report.contains("Google Play apps"))
        #expect(report.contains("com.acme.journal  push-audience https://relay.acme.com/play, push-account pubsub-push@acme-prod.iam.gserviceaccount.com"))
        #expect(report.contains("service-account ./play-sa.json (events enriched from the Developer API)"))
        #expect(report.contains("push-token keys: https://127.0.0.1:8443/certs (ca-file ./test-ca.pem)"))
        #expect(report.contains("Play Developer API: http://127.0.0.1:9000"))
    }

    @Test func defaultsWithoutTheLines() throws {
        let c = try parsed("app com.acme.journal {\n    apple-id 1\n}\n")
        #expect(c.playApps.isEmpty && c.googleCerts == nil && c.googleAPI == nil && !c.hasPlayPath)
        #expect(c.paths[0].kind == .appStore)
        #expect(!c.checkReport().contains("Google Play"))
        // service-account is optional; the default keys URL is reported.
        let minimal = try parsed("""
            play com.acme.journal {
                push-audience aud-1
                push-account push@p.iam.gserviceaccount.com
            }
            path /play play
            path /appstore/notifications
            """)
        #expect(minimal.playApps[0].serviceAccountFile == nil)
        #expect(minimal.paths.map(\.kind) == [.googlePlay, .appStore])
        #expect(minimal.checkReport().contains("push-token keys: https://www.googleapis.com/oauth2/v3/certs"))
        #expect(minimal.checkReport().contains("<not set>: events are not enriched"))
    }

    @Test func routesNamingPlayTypesAreNotWarnedAbout() throws {
        let c = try parsed(Self.block + """

            destination q file ./data/q
            route * com.acme.journal SUBSCRIPTION_RENEWED,ONE_TIME_PRODUCT_PURCHASED,VOIDED_PURCHASE -> q
            route * com.acme.journal SUBSCRIPTION_NOTIFICATION_21,UNREADABLE,DID_RENEW -> q
            route * com.acme.journal SUBSCRIPTION_RENEWD -> q
            route * com.acme.journal SUBSCRIPTION_NOTIFICATION_X -> q
            """)
        let routeWarnings = c.warnings.filter { $0.contains("route type") }
        #expect(routeWarnings.count == 2, "\(routeWarnings)")
        #expect(routeWarnings.contains { $0.contains("SUBSCRIPTION_RENEWD") })
        #expect(routeWarnings.contains { $0.contains("SUBSCRIPTION_NOTIFICATION_X") })
    }

    @Test func eachMistakeIsNamed() {
        func play(_ lines: String, package: String = "com.acme.journal") -> String {
            "play \(package) {\n\(lines)\n}\npath /play play\n"
        }
        let good = "    push-audience https://a/play\n    push-account p@x.iam.gserviceaccount.com"
        expectOne(play("    push-account p@x.iam.gserviceaccount.com"), .missingArgument, line: 1, "has no 'push-audience'")
        expectOne(play("    push-audience https://a/play"), .missingArgument, line: 1, "has no 'push-account'")
        expectOne(play(good, package: "com"), .invalidValue, line: 1, "not an Android package name")
        expectOne(play(good, package: "com.1acme"), .invalidValue, line: 1, "not an Android package name")
        expectOne(play(good, package: "com.acme-journal"), .invalidValue, line: 1, "not an Android package name")
        expectOne(play(good + "\n    push-account q@x.iam.gserviceaccount.com"), .duplicate, line: 4, "duplicate option 'push-account'")
        expectOne(play(good + "\n    apple-id 1"), .unknownOption, line: 4, "unknown option 'apple-id' in play 'com.acme.journal'")
        expectOne(play("    push-audience https://a/play\n    push-account not-an-email"), .invalidValue, line: 3, "not a service account email")
        expectOne(play("    push-audience https://a/play\n    push-account a@b"), .invalidValue, line: 3, "not a service account email")
        expectOne(play("    push-audience\n    push-account p@x.iam.gserviceaccount.com"), .missingArgument, line: 2, "incomplete 'push-audience'")
        expectOne(play(good + "\n    service-account a.json b.json"), .unexpectedArgument, line: 4, "service-account FILE")
        expectOne(play(good) + "play com.acme.journal {\n\(good)\n}\n", .duplicate, line: 6, "duplicate play 'com.acme.journal'")
        expectOne("play com.acme.journal\npath /play play\n", .missingArgument, line: 1, "needs a block")
        expectOne("path /play play\n", .invalidValue, line: 1, "a 'play' path needs at least one play block")
        expectOne(play(good) + "path /x plya\n", .invalidValue, line: 6, "(or 'play' for Google Play pushes)")
        expectOne(play(good) + "google-certs-url http://certs.example.com/x\n", .invalidValue, line: 6, "plain http:// to a host that is not this machine")
        expectOne(play(good) + "google-api-url http://10.0.0.1/\n", .invalidValue, line: 6, "plain http://")
        expectOne(play(good) + "google-api-url ftp://x/\n", .invalidValue, line: 6, "invalid google-api-url")
        expectOne(play(good) + "google-certs-url https://a/ ca-file\n", .invalidValue, line: 6, "expected 'ca-file PEM-FILE'")
        expectOne(play(good) + "google-certs-url https://a/ cafile x\n", .invalidValue, line: 6, "expected 'ca-file PEM-FILE'")
        expectOne(play(good) + "google-certs-url https://a/\ngoogle-certs-url https://b/\n", .duplicate, line: 7, "duplicate 'google-certs-url'")
        expectOne(play(good) + "google-api-url\n", .missingArgument, line: 6, "google-api-url URL [ca-file PEM-FILE]")
        expectOne(play(good) + "route * com.acme!app * -> x\ndestination x file ./x\n", .invalidValue, line: 6, "not a bundle id or package name")
    }
}
