import Foundation
import Testing
@testable import StoreRelayGooglePlay
import StoreRelayNet
import StoreRelayCore
import StoreRelayTestSupport

/// The key set source against a real HTTPS server on loopback: first fetch, cache lifetime,
/// a failed fetch keeping the old keys, and the on-demand refresh and its rate limit.
@Suite(.serialized) struct GoogleKeySetSourceTests {
    static let signer = try! PlayPushSigner(kids: ["key-1", "key-2"])

    func source(_ server: PlayKeySetServer, onDemand: Duration = .seconds(30)) throws -> GoogleKeySetSource {
        var options = GoogleKeySetSource.Options(url: try HTTPURL.parse(server.url), caFile: server.caFile)
        options.firstRetry = .milliseconds(50)
        options.onDemandInterval = onDemand
        return GoogleKeySetSource(options: options, logger: .disabled)
    }

    @Test func fetchesAtStartAndRefreshesForAnUnknownKidOnce() throws {
        let server = try PlayKeySetServer(document: try Self.signer.keySetDocument(["key-1"]))
        let source = try source(server)
        defer { source.stop() }
        #expect(source.current == nil)
        source.start()
        #expect(pollUntil(timeout: 10) { source.current != nil }, "no keys fetched: \(source.lastError ?? "")")
        #expect(source.current?.keys.keys.sorted() == ["key-1"])
        #expect(server.fetchCount == 1)

        // Google rotates: the first push naming key-2 asks for one refresh, the next ones
        // within the interval do not.
        server.set { $0.document = try! Self.signer.keySetDocument(["key-1", "key-2"]) }
        source.refresh(forUnknownKey: "key-2")
        #expect(pollUntil(timeout: 10) { source.current?.keys["key-2"] != nil })
        for _ in 0..<50 { source.refresh(forUnknownKey: "bogus") }
        // Long enough for a fetch that must not happen to have happened.
        usleep(300_000)
        #expect(server.fetchCount == 2)
    }

    @Test func retriesUntilTheFirstFetchSucceedsAndKeepsKeysOnFailure() throws {
        let server = try PlayKeySetServer(document: "{}")
        server.set { $0.status = 503 }
        let source = try source(server, onDemand: .milliseconds(1))
        defer { source.stop() }
        source.start()
        #expect(pollUntil(timeout: 10) { server.fetchCount >= 2 }, "no retry after a failed fetch")
        #expect(source.current == nil)
        #expect(source.lastError?.contains("503") == true)
        server.set {
            $0.status = 200
            $0.document = try! Self.signer.keySetDocument(["key-1"])
        }
        #expect(pollUntil(timeout: 10) { source.current != nil }, "the retries stopped")
        // A broken answer never replaces good keys.
        server.set { $0.document = #"{"keys":[]}"# }
        let before = server.fetchCount
        source.refresh(forUnknownKey: "key-9")
        #expect(pollUntil(timeout: 10) { server.fetchCount > before && source.lastError != nil })
        #expect(source.current?.keys.keys.sorted() == ["key-1"])
    }

    @Test func boundsTheCacheLifetime() throws {
        let options = GoogleKeySetSource.Options(url: try HTTPURL.parse("https://www.googleapis.com/oauth2/v3/certs"))
        let source = GoogleKeySetSource(options: options, logger: .disabled)
        #expect(source.lifetime(cacheControl: "public, max-age=19845, must-revalidate, no-transform") == .seconds(19845))
        #expect(source.lifetime(cacheControl: "max-age=10") == .seconds(300))
        #expect(source.lifetime(cacheControl: "max-age=9999999") == .seconds(86_400))
        #expect(source.lifetime(cacheControl: "no-cache") == .seconds(3600))
        #expect(source.lifetime(cacheControl: "max-age=-5") == .seconds(3600))
        #expect(source.lifetime(cacheControl: nil) == .seconds(3600))
        #expect(source.retryDelay(afterFailures: 1) == .seconds(1))
        #expect(source.retryDelay(afterFailures: 4) == .seconds(8))
        #expect(source.retryDelay(afterFailures: 40) == .seconds(300))
    }
}

