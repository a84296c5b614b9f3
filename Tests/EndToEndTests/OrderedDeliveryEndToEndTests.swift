import Foundation
import StoreRelayCore
import StoreRelayTestSupport
import Testing

/// `order per-subscription` across `kill -9` (SPEC "Delivery controls"): a gateway is killed
/// while a subscription's first events retry and its later ones are held; the gateway
/// started again delivers each subscription's events in the order they were accepted.
@Suite("Ordered delivery across kill -9", .serialized)
struct OrderedDeliveryEndToEndTests {
    /// `...-0000000000NN`: a UUID whose last group is the event's number, as the sink's
    /// `/fail-every/` paths read it.
    static func uuid(_ number: Int) -> String { String(format: "00000000-0000-4000-8000-%012d", number) }

    @Test func eachSubscriptionArrivesInOrderAfterAKill() throws {
        let (events, subscriptions) = (20, 4)
        let directory = try Gateway.trustingDirectory("storerelay-order-kill")
        func config(_ url: String) -> String {
            Gateway.bareConfig("""
                trust-root ./test-root.pem
                \(webhookDestination("hook", url, options: "order per-subscription\nmax-attempts 1000\nbackoff 100ms 200ms\nconcurrency 8"))
                route * * * -> hook
                """)
        }
        let first = try Gateway(config: config("http://127.0.0.1:1/down"), directory: directory, host: .childProcess)
        for n in 0..<events {
            let body = try testSigner.body(uuid: Self.uuid(n), originalTransactionId: "sub-\(n % subscriptions)")
            #expect(try first.post(json: body).status == 200)
        }
        // Attempts fail and are retried, the later events of each subscription held meanwhile.
        #expect(first.process.waitForLog { $0["message"]?.stringValue == "delivery attempt failed" } != nil)
        first.process.send(SIGKILL)
        _ = first.process.waitForExit()

        let sink = try WebhookSink(secret: testSigningSecret)
        let path = "/fail-every/3/1/after-kill"
        let second = try Gateway(config: config(sink.url(path)), directory: directory, host: .childProcess)
        defer { second.process.send(SIGTERM); _ = second.process.waitForExit() }
        #expect(sink.waitFor(timeout: 30) { _ in sink.successes(path: path, groups: subscriptions).values.map(\.count).reduce(0, +) >= events })
        for (subscription, numbers) in sink.successes(path: path, groups: subscriptions) {
            #expect(numbers == Array(stride(from: subscription, to: events, by: subscriptions)), "subscription \(subscription)")
        }
    }
}
