import Dispatch
import StoreRelayCluster
import StoreRelayCore
import StoreRelayDelivery
import StoreRelayNet
import StoreRelayTestSupport
import StoreRelayVerification

/// An accepted notification with id `id`, routed to `destinations` (none: unrouted), signed
/// `signedAgo` before now (replays re-apply the staleness rule).
func notification(_ id: String, destinations: [String] = ["billing", "crm"], signedAgo: Duration = .seconds(60),
                  subscription: String? = nil) -> StoredNotification {
    let signed = Timestamp.now().milliseconds - signedAgo.wholeMilliseconds
    let payload = try! JSONValue.parse(#"{"notificationType":"DID_RENEW","notificationUUID":"\#(id)","version":"2.0","signedDate":\#(signed),"data":{"bundleId":"com.acme.journal","environment":"Sandbox","appAppleId":1}}"#)
    let transaction = subscription.map { JSONValue.object(JSONObject([("originalTransactionId", .string($0))])) }
    let event = try! NormalizedEvent(content: NotificationContent(payload: payload.objectValue!, transaction: transaction, environment: .sandbox),
                                     receivedAt: Timestamp(milliseconds: 1_700_000_000_500))
    return StoredNotification(event: event, disposition: .accept, destinations: destinations,
                              body: Array(#"{"signedPayload":"x.y.z"}"#.utf8), receivedAt: Timestamp(milliseconds: 1_700_000_000_500))
}

/// A client of `server` that checks the server as cluster mode does (durability, and WAITAOF
/// with `wait-replicas`), started.
func clusterClient(_ server: RedisServerProcess, requirements: ServerRequirements = ServerRequirements()) throws -> RedisClient {
    var configuration = RedisConfiguration(url: try RedisURL.parse("redis://127.0.0.1:\(server.port)"))
    configuration.connectTimeout = .seconds(3)
    configuration.commandTimeout = .seconds(3)
    configuration.reconnectInitial = .milliseconds(20)
    configuration.reconnectMaximum = .milliseconds(200)
    configuration.connectionChecks = requirements.checks
    configuration.acceptConnection = requirements.refusal
    let client = RedisClient(configuration: configuration)
    client.start()
    return client
}

/// The result a completion-style call gives, waited for.
func waitForResult<T: Sendable>(_ body: (@escaping @Sendable (Result<T, RedisError>) -> Void) -> Void) throws -> T {
    let outcome = Locked<Result<T, RedisError>?>(nil)
    let done = DispatchSemaphore(value: 0)
    body { result in
        outcome.withLock { $0 = result }
        done.signal()
    }
    done.wait()
    return try outcome.current!.get()
}

/// One command's reply, or nil when it failed.
func reply(_ client: RedisClient, _ arguments: String...) -> RESPValue? {
    try? waitForResult { completion in client.send(RESPCommand(arguments[0], Array(arguments.dropFirst()))) { completion($0) } }
}

/// Keeps every line logged, for tests that expect one.
final class LogCapture: LogSink {
    let lines = Locked<[String]>([])

    func write(line: String) { lines.withLock { $0.append(line) } }

    var logger: Logger { Logger(label: "test", level: .info, sink: self) }

    /// Whether a line holding every one of `fragments` was logged.
    func contains(_ fragments: String...) -> Bool {
        lines.current.contains { line in fragments.allSatisfy { line.contains($0) } }
    }
}

extension InstanceClaim {
    /// `awaitRelease`, waited for on this thread (tests may wait).
    func awaitReleaseWaiting(by client: RedisClient, timeout: Duration) {
        let done = DispatchSemaphore(value: 0)
        awaitRelease(by: client, timeout: timeout, logger: .disabled, on: DispatchQueue(label: "storerelay.test.claim")) { done.signal() }
        done.wait()
    }
}
