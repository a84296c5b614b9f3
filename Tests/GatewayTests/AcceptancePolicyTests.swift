import Testing
@testable import StoreRelayGateway
import StoreRelayConfig
import StoreRelayDelivery
import StoreRelayCore

/// The policy's first rule (security review, point 7): a notification signed before the
/// dedupe window may have been forgotten, so it is quarantined as stale, not fanned out.
@Suite struct AcceptancePolicyTests {
    static let day: Int64 = 86_400_000
    let now = Timestamp(milliseconds: 1_800_000_000_000)

    func policy(window days: Int64 = 30) -> AcceptancePolicy {
        AcceptancePolicy(acceptedEnvironments: [.production, .sandbox], apps: [:], primarySharedSecret: nil,
                         dedupeWindow: .seconds(days * 86_400))
    }

    func facts(signedDaysAgo days: Int64?) -> AcceptancePolicy.Facts {
        AcceptancePolicy.Facts(environment: .production, bundleId: "com.acme.journal", appAppleId: nil,
                               signedDate: days.map { Timestamp(milliseconds: now.milliseconds - $0 * Self.day) })
    }

    @Test func aNotificationSignedBeforeTheWindowIsStale() {
        #expect(policy().disposition(of: facts(signedDaysAgo: 29), pathEnvironment: nil, now: now) == .accept)
        guard case .quarantine(let reason) = policy().disposition(of: facts(signedDaysAgo: 31), pathEnvironment: nil, now: now) else {
            Issue.record("a notification signed 31 days ago was not quarantined")
            return
        }
        #expect(reason.hasPrefix("stale: signed "))
        #expect(reason.contains("30d dedupe-window"))
        // The window is the configured one, and undated notifications (V1, old V2) are never stale.
        #expect(policy(window: 60).disposition(of: facts(signedDaysAgo: 31), pathEnvironment: nil, now: now) == .accept)
        #expect(policy().disposition(of: facts(signedDaysAgo: nil), pathEnvironment: nil, now: now) == .accept)
        // Staleness comes first: it is the reason given even when another rule also applies.
        var other = facts(signedDaysAgo: 400)
        other.environment = .xcode
        guard case .quarantine(let first) = policy().disposition(of: other, pathEnvironment: nil, now: now) else {
            Issue.record("not quarantined")
            return
        }
        #expect(first.hasPrefix("stale:"))
    }

    /// A notification Apple signed that this build cannot read is quarantined with why, before
    /// any other rule, and so is one with no environment at all.
    @Test func whatCannotBeReadIsQuarantinedFirst() {
        var unreadable = facts(signedDaysAgo: 400)
        unreadable.notUnderstood = "the notification names an unknown environment \"Staging\""
        unreadable.environment = nil
        let disposition = policy().disposition(of: unreadable, pathEnvironment: .sandbox, now: now)
        #expect(disposition == .quarantine(reason: "not understood: the notification names an unknown environment \"Staging\""))
        #expect(disposition.isNotUnderstood)
        unreadable.environment = .production
        #expect(policy().disposition(of: unreadable, pathEnvironment: nil, now: now).isNotUnderstood)
        var noEnvironment = facts(signedDaysAgo: 1)
        noEnvironment.environment = nil
        #expect(policy().disposition(of: noEnvironment, pathEnvironment: nil, now: now).isNotUnderstood)
        #expect(!policy().disposition(of: facts(signedDaysAgo: 400), pathEnvironment: nil, now: now).isNotUnderstood)
    }

    @Test func theWindowComesFromTheConfiguration() throws {
        var configuration = GatewayConfiguration()
        configuration.dedupeWindow = .seconds(14 * 86_400)
        #expect(AcceptancePolicy(configuration).dedupeWindow == .seconds(14 * 86_400))
        #expect(AcceptancePolicy(configuration, dedupeWindow: .seconds(8 * 86_400)).dedupeWindow == .seconds(8 * 86_400))
    }
}
