import Testing
@testable import StoreRelayGateway
import StoreRelayCore

/// The admin page's alerts (a cluster server that lost its data, issue 26): first on the
/// page, escaped like every other value.
@Suite struct AlertTests {
    @Test func alertsComeFirstAndEscaped() {
        let model = AdminPage.Model(
            ready: true, destinations: [], deadLetterCounts: [:], letters: [], nextCursor: nil,
            filters: DeadLetterFilters(limit: 50), csrfToken: nil, notice: "Replayed 1 dead letter.", now: .now(),
            alerts: ["The cluster server lost its data <script>x</script>"])
        let page = AdminPage.render(model)
        #expect(page.contains("<p class=\"alert bad\">The cluster server lost its data &lt;script&gt;x&lt;/script&gt;</p>"))
        let alert = page.range(of: "class=\"alert bad\"")
        let notice = page.range(of: "class=\"notice\"")
        #expect(alert != nil && notice != nil && alert!.lowerBound < notice!.lowerBound)
        var quiet = model
        quiet.alerts = []
        #expect(!AdminPage.render(quiet).contains("alert bad"))
    }
}
