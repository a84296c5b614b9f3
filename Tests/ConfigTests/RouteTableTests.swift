import Testing
import StoreRelayCore
@testable import StoreRelayConfig

/// The routing rules, one test each, through parsed route lines.
@Suite struct RouteTableTests {
    private func table(_ routes: String) throws -> RouteTable {
        let declarations = ["a", "b", "c", "d"].map { "destination \($0) file ./\($0)" }.joined(separator: "\n")
        return try parsed(declarations + "\n" + routes).routes
    }

    @Test func exactMatchOnEveryColumn() throws {
        let t = try table("route production com.x.app TEST -> a")
        #expect(t.destinations(environment: .production, bundleId: "com.x.app", type: "TEST", subtype: nil) == ["a"])
        #expect(t.destinations(environment: .sandbox, bundleId: "com.x.app", type: "TEST", subtype: nil) == [])
        #expect(t.destinations(environment: .production, bundleId: "com.x.other", type: "TEST", subtype: nil) == [])
        #expect(t.destinations(environment: .production, bundleId: "com.x.app", type: "REFUND", subtype: nil) == [])
    }

    @Test func starMatchesAnything() throws {
        let t = try table("route * * * -> a")
        for environment in AppStoreEnvironment.allCases {
            #expect(t.destinations(environment: environment, bundleId: "any.bundle", type: "WHATEVER_NEW", subtype: "NEW_SUB") == ["a"])
        }
    }

    @Test func commaListsMatchAnyListedValue() throws {
        let t = try table("route production,xcode com.x.a, com.x.b REFUND,REVOKE -> a")
        #expect(t.destinations(environment: .xcode, bundleId: "com.x.b", type: "REVOKE", subtype: nil) == ["a"])
        #expect(t.destinations(environment: .production, bundleId: "com.x.a", type: "REFUND", subtype: nil) == ["a"])
        #expect(t.destinations(environment: .sandbox, bundleId: "com.x.a", type: "REFUND", subtype: nil) == [])
        #expect(t.destinations(environment: .production, bundleId: "com.x.c", type: "REFUND", subtype: nil) == [])
        #expect(t.destinations(environment: .production, bundleId: "com.x.a", type: "REFUND_DECLINED", subtype: nil) == [])
    }

    @Test func bareTypeMatchesEverySubtype() throws {
        let t = try table("route * * DID_RENEW -> a")
        #expect(t.destinations(environment: .production, bundleId: "x", type: "DID_RENEW", subtype: nil) == ["a"])
        #expect(t.destinations(environment: .production, bundleId: "x", type: "DID_RENEW", subtype: "BILLING_RECOVERY") == ["a"])
    }

    @Test func typeWithSubtypeMatchesOnlyThatSubtype() throws {
        let t = try table("route * * DID_RENEW/BILLING_RECOVERY -> a")
        #expect(t.destinations(environment: .production, bundleId: "x", type: "DID_RENEW", subtype: "BILLING_RECOVERY") == ["a"])
        #expect(t.destinations(environment: .production, bundleId: "x", type: "DID_RENEW", subtype: nil) == [])
        #expect(t.destinations(environment: .production, bundleId: "x", type: "DID_RENEW", subtype: "OTHER") == [])
        #expect(t.destinations(environment: .production, bundleId: "x", type: "SUBSCRIBED", subtype: "BILLING_RECOVERY") == [])
    }

    /// `TYPE/-` matches the type only without a subtype (issue 18, point 6), alone or beside
    /// named subtypes, and `RouteRule.matches` agrees with the compiled table.
    @Test func typeWithDashMatchesOnlyNoSubtype() throws {
        let t = try table("route * * DID_RENEW/- -> a\nroute * * DID_CHANGE_RENEWAL_PREF/-, DID_CHANGE_RENEWAL_PREF/UPGRADE -> b")
        #expect(t.destinations(environment: .production, bundleId: "x", type: "DID_RENEW", subtype: nil) == ["a"])
        #expect(t.destinations(environment: .production, bundleId: "x", type: "DID_RENEW", subtype: "BILLING_RECOVERY") == [])
        #expect(t.destinations(environment: .production, bundleId: "x", type: "DID_CHANGE_RENEWAL_PREF", subtype: nil) == ["b"])
        #expect(t.destinations(environment: .production, bundleId: "x", type: "DID_CHANGE_RENEWAL_PREF", subtype: "UPGRADE") == ["b"])
        #expect(t.destinations(environment: .production, bundleId: "x", type: "DID_CHANGE_RENEWAL_PREF", subtype: "DOWNGRADE") == [])
        let rule = try #require(t.rules.first)
        #expect(rule.types?.first?.description == "DID_RENEW/-")
        expectError("destination a file ./a\nroute * * DID_RENEW/-- -> a\n", .invalidValue, line: 2, column: 11, containing: "TYPE/- for no subtype")
    }

    /// Route types and subtypes Apple does not send are valid but never match: `check` and
    /// `serve` warn, naming the line and the likely type.
    @Test func routesOutsideTheCatalogAreWarnedAbout() throws {
        let c = try parsed("""
            app com.a
            route * * MIGRATE -> a
            route * * EXPIRED/FOO, EXPIRED/- -> a
            route * * DID_RENEW/-, SUBSCRIBED/INITIAL_BUY, SOMETHING_ELSE -> a
            destination a file ./a
            """)
        let warnings = c.warnings.filter { $0.hasPrefix("routes.conf:") }
        #expect(warnings.count == 4, "\(warnings)")
        #expect(warnings.contains { $0.hasPrefix("routes.conf:2:") && $0.contains("MIGRATE") && $0.contains("did you mean MIGRATION?") })
        #expect(warnings.contains { $0.hasPrefix("routes.conf:3:") && $0.contains("has no subtype FOO") })
        #expect(warnings.contains { $0.hasPrefix("routes.conf:3:") && $0.contains("always has a subtype") })
        #expect(warnings.contains { $0.hasPrefix("routes.conf:4:") && $0.contains("SOMETHING_ELSE") && !$0.contains("did you mean") })
        #expect(try parsed("environments sandbox\napp com.a\ndestination a file ./a\nroute * * DID_RENEW/-, REFUND, EXPIRED/VOLUNTARY -> a").warnings.isEmpty)
    }

    /// Apple signs every app's notifications with one chain: without `app` lines, or in
    /// production with an app lacking `apple-id`, the operator's apps and others' look alike.
    @Test func productionWithoutAppleIdsIsWarnedAbout() throws {
        let open = try parsed("destination a file ./a\nroute * * * -> a").warnings
        #expect(open.count == 1 && open[0].hasPrefix("no app is declared"), "\(open)")
        let partial = try parsed("""
            app com.a {
                apple-id 1
            }
            app com.b
            destination a file ./a
            route * * * -> a
            """).warnings
        #expect(partial == ["app com.b has no apple-id, so its production V2 notifications' appAppleId is not checked (V1 notifications carry none)"])
        #expect(try parsed("app com.a {\napple-id 1\n}\ndestination a file ./a\nroute * * * -> a").warnings.isEmpty)
        #expect(try parsed("environments sandbox xcode\napp com.b\ndestination a file ./a\nroute * * * -> a").warnings.isEmpty)
    }

    @Test func typeWithStarMatchesAnySubtypeOrNone() throws {
        let t = try table("route * * SUBSCRIBED/* -> a")
        #expect(t.destinations(environment: .sandbox, bundleId: "x", type: "SUBSCRIBED", subtype: "RESUBSCRIBE") == ["a"])
        #expect(t.destinations(environment: .sandbox, bundleId: "x", type: "SUBSCRIBED", subtype: nil) == ["a"])
        #expect(t.destinations(environment: .sandbox, bundleId: "x", type: "DID_RENEW", subtype: nil) == [])
    }

    @Test func mixedTypePatternsInOneColumn() throws {
        let t = try table("route * * DID_RENEW/A,DID_RENEW/B,TEST -> a")
        #expect(t.destinations(environment: .sandbox, bundleId: "x", type: "DID_RENEW", subtype: "B") == ["a"])
        #expect(t.destinations(environment: .sandbox, bundleId: "x", type: "DID_RENEW", subtype: "C") == [])
        #expect(t.destinations(environment: .sandbox, bundleId: "x", type: "TEST", subtype: nil) == ["a"])
        // TYPE after TYPE/SUBTYPE widens to every subtype.
        let wide = try table("route * * DID_RENEW/A,DID_RENEW -> a")
        #expect(wide.destinations(environment: .sandbox, bundleId: "x", type: "DID_RENEW", subtype: "Z") == ["a"])
    }

    @Test func unionOfMatchingRoutesEachOnceInFirstSeenOrder() throws {
        let t = try table("""
            route production * * -> b, a
            route * * TEST -> c, a
            route production * TEST -> d, b, c
            route sandbox * * -> a
            """)
        #expect(t.destinations(environment: .production, bundleId: "x", type: "TEST", subtype: nil) == ["b", "a", "c", "d"])
        #expect(t.destinations(environment: .sandbox, bundleId: "x", type: "TEST", subtype: nil) == ["c", "a"])
        #expect(t.destinations(environment: .production, bundleId: "x", type: "REFUND", subtype: nil) == ["b", "a"])
        #expect(t.destinationNames == ["b", "a", "c", "d"])
    }

    @Test func noMatchGivesEmpty() throws {
        let t = try table("route sandbox * TEST -> a")
        #expect(t.destinations(environment: .production, bundleId: "x", type: "TEST", subtype: nil).isEmpty)
        #expect(RouteTable(rules: []).destinations(environment: .sandbox, bundleId: "x", type: "TEST", subtype: nil).isEmpty)
    }

    @Test func compiledTableAgreesWithRuleByRuleMatching() throws {
        // The frozen table must give what the plain rules say, for every combination.
        let t = try table("""
            route production com.a * -> a
            route sandbox,xcode * REFUND,DID_RENEW/X -> b
            route * com.a,com.b DID_RENEW/* -> c
            route localtesting * * -> d, a
            """)
        for environment in AppStoreEnvironment.allCases {
            for bundle in ["com.a", "com.b", "com.c"] {
                for (type, subtype) in [("REFUND", nil), ("DID_RENEW", "X"), ("DID_RENEW", nil), ("TEST", nil)] as [(String, String?)] {
                    var expected: [String] = []
                    for rule in t.rules where rule.matches(environment: environment, bundleId: bundle, type: type, subtype: subtype) {
                        for name in rule.destinations where !expected.contains(name) { expected.append(name) }
                    }
                    #expect(t.destinations(environment: environment, bundleId: bundle, type: type, subtype: subtype) == expected)
                }
            }
        }
    }
}
