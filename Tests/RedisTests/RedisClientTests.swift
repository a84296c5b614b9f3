import Dispatch
import Foundation
import StoreRelayCore
@testable import StoreRelayNet
import StoreRelayTestSupport
import Testing

/// The Redis client against a real `redis-server` (started per test on a free port).
@Suite(.serialized, .enabled(if: RedisServerProcess.isAvailable, "redis-server is not installed (apt-get install redis-server)"))
struct RedisClientTests {
    private func client(_ url: String, configure: (inout RedisConfiguration) -> Void = { _ in }) throws -> RedisClient {
        var configuration = RedisConfiguration(url: try RedisURL.parse(url))
        configuration.connectTimeout = .seconds(3)
        configuration.commandTimeout = .seconds(3)
        configuration.reconnectInitial = .milliseconds(20)
        configuration.reconnectMaximum = .milliseconds(200)
        configure(&configuration)
        let client = RedisClient(configuration: configuration)
        client.start()
        return client
    }

    @Test func commandsRepliesAndPipelines() async throws {
        let server = try RedisServerProcess()
        let redis = try client("redis://127.0.0.1:\(server.port)")
        defer { redis.shutdown() }
        try await waitUntil { redis.isConnected }
        #expect(try await redis.reply(RESPCommand("SET", "greeting", "hello\r\nworld")) == .simpleString("OK"))
        #expect(try await redis.reply(RESPCommand("GET", "greeting")).string == "hello\r\nworld")
        #expect(try await redis.reply(RESPCommand("GET", "missing")) == .bulkString(nil))
        #expect(try await redis.reply(RESPCommand("INCRBY", "n", "41")) == .integer(41))
        #expect(try await redis.reply(RESPCommand("NOSUCHCOMMAND")).errorKind == "ERR", "an error reply is a value")
        // A thousand commands in one write, answered in order.
        let commands = (0..<1000).map { _ in RESPCommand("INCR", "counter") }
        let results = await redis.replies(commands)
        #expect(results.map { (try? $0.get())?.integer } == (1...1000).map { Int64($0) })
        // A large value crosses many reads.
        let big = String(repeating: "x", count: 3 << 20)
        #expect(try await redis.reply(RESPCommand("SET", "big", big)) == .simpleString("OK"))
        #expect(try await redis.reply(RESPCommand("STRLEN", "big")) == .integer(3 << 20))
        #expect(try await redis.reply(RESPCommand("GET", "big")).string?.count == 3 << 20)
    }

    @Test func concurrentSendersEachGetTheirOwnReply() async throws {
        let server = try RedisServerProcess()
        let redis = try client("redis://127.0.0.1:\(server.port)")
        defer { redis.shutdown() }
        try await waitUntil { redis.isConnected }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<200 {
                group.addTask {
                    let key = "key-\(index)"
                    let set = try await redis.reply(RESPCommand("SET", key, "value-\(index)"))
                    let got = try await redis.reply(RESPCommand("GET", key))
                    #expect(set == .simpleString("OK") && got.string == "value-\(index)")
                }
            }
            try await group.waitForAll()
        }
    }

    @Test func authenticatesWithUserAndPasswordAndSelectsTheDatabase() async throws {
        let server = try RedisServerProcess(extraArguments: [
            "--requirepass", "default-secret", "--user", "relay", "on", ">relay-p@ss", "~*", "&*", "+@all",
        ])
        let redis = try client("redis://relay:relay-p%40ss@127.0.0.1:\(server.port)/5")
        defer { redis.shutdown() }
        try await waitUntil { redis.isConnected }
        #expect(try await redis.reply(RESPCommand("ACL", "WHOAMI")).string == "relay")
        #expect(try await redis.reply(RESPCommand("CLIENT", "INFO")).string?.contains("db=5") == true)
        let defaultUser = try client("redis://:default-secret@127.0.0.1:\(server.port)")
        defer { defaultUser.shutdown() }
        try await waitUntil { defaultUser.isConnected }
        #expect(try await defaultUser.reply(RESPCommand("ACL", "WHOAMI")).string == "default")
    }

    @Test func aWrongPasswordIsRefusedWithASentenceAndNeverConnects() async throws {
        let server = try RedisServerProcess(extraArguments: ["--requirepass", "right"])
        let redis = try client("redis://:wrong@127.0.0.1:\(server.port)")
        defer { redis.shutdown() }
        try await waitUntil { redis.lastError != nil }
        let error = try #require(redis.lastError)
        #expect(error.code == .refused)
        #expect(error.message.contains("WRONGPASS") && !error.message.contains("wrong@"))
        #expect(!redis.isConnected)
        let failure = await redis.failure(RESPCommand("PING"))
        #expect(failure?.code == .unavailable, "no command is sent without a connection")
    }

    @Test func connectionChecksCanRefuseAServer() async throws {
        let server = try RedisServerProcess(durable: false)
        let redis = try client("redis://127.0.0.1:\(server.port)") { configuration in
            configuration.connectionChecks = [RESPCommand("CONFIG", "GET", "appendonly")]
            configuration.acceptConnection = { replies in
                replies.first?.elements?.last?.string == "yes" ? nil : "the server runs with appendonly no"
            }
        }
        defer { redis.shutdown() }
        try await waitUntil { redis.lastError != nil }
        #expect(redis.lastError?.code == .refused && redis.lastError?.message == "the server runs with appendonly no")
        #expect(!redis.isConnected)
    }

    @Test func scriptsRunBySHAAndAreLoadedWhenTheServerForgotThem() async throws {
        let server = try RedisServerProcess()
        let redis = try client("redis://127.0.0.1:\(server.port)")
        defer { redis.shutdown() }
        try await waitUntil { redis.isConnected }
        let script = RedisScript(source: "return redis.call('INCRBY', KEYS[1], ARGV[1])",
                                 sha1: "8cd00688c05c46bde4a2e60658ef20a2e5c0b248")
        #expect(RedisScript(source: script.source) == script, "the SHA-1 computed here is the server's")
        let computed = try await redis.reply(RESPCommand("SCRIPT", "LOAD", script.source)).string
        #expect(computed == script.sha1, "the test's SHA-1 is the server's")
        #expect(try await redis.evaluate(script, keys: ["total"], arguments: [Array("5".utf8)]) == .integer(5))
        #expect(try await redis.reply(RESPCommand("SCRIPT", "FLUSH")) == .simpleString("OK"))
        #expect(try await redis.evaluate(script, keys: ["total"], arguments: [Array("2".utf8)]) == .integer(7), "NOSCRIPT → load → run")
        let wrong = RedisScript(source: "return 1", sha1: String(repeating: "0", count: 40))
        let error = await redis.evaluationFailure(wrong)
        #expect(error?.code == .protocolError, "a SHA-1 that does not match its source fails loudly")
    }

    /// A session's commands all run on the connection it began on, scripts included (loaded
    /// again when the server forgot them); once that connection is gone they fail rather
    /// than move to the next one, where WAITAOF would wait for nothing.
    @Test func aSessionStaysOnItsConnection() async throws {
        let server = try RedisServerProcess()
        let redis = try client("redis://127.0.0.1:\(server.port)")
        defer { redis.shutdown() }
        try await waitUntil { redis.isConnected }
        let session = try redis.session().get()
        let script = RedisScript(source: "return redis.call('INCRBY', KEYS[1], ARGV[1])")
        #expect(try await session.evaluate(script, keys: ["total"], arguments: [Array("5".utf8)]) == .integer(5))
        let id = try await session.reply(RESPCommand("CLIENT", "ID")).integer
        #expect(try await session.reply(RESPCommand("SCRIPT", "FLUSH")) == .simpleString("OK"))
        #expect(try await session.evaluate(script, keys: ["total"], arguments: [Array("2".utf8)]) == .integer(7), "NOSCRIPT → load → run")
        #expect(try await session.reply(RESPCommand("CLIENT", "ID")).integer == id, "one connection throughout")

        try server.restart()
        try await waitUntil { redis.isConnected }
        await #expect(throws: RedisError.self) { try await session.reply(RESPCommand("PING")) }
        #expect(try await redis.session().get().reply(RESPCommand("PING")) == .simpleString("PONG"))
    }

    /// A check's error reply reaches `acceptConnection`, which can say what it means.
    @Test func aCheckErrorReplyIsReadByTheAcceptingFunction() async throws {
        let server = try RedisServerProcess()
        let redis = try client("redis://127.0.0.1:\(server.port)") { configuration in
            configuration.connectionChecks = [RESPCommand("NOSUCHCOMMAND")]
            configuration.acceptConnection = { replies in
                replies.first?.errorKind == "ERR" ? "the server has no NOSUCHCOMMAND: use a newer one" : "unexpected \(replies)"
            }
        }
        defer { redis.shutdown() }
        try await waitUntil { redis.lastError != nil }
        #expect(redis.lastError?.message == "the server has no NOSUCHCOMMAND: use a newer one")
    }

    @Test func reconnectsAfterTheServerDiesAndComesBack() async throws {
        let server = try RedisServerProcess()
        let changes = Locked<[Bool]>([])
        let redis = try client("redis://127.0.0.1:\(server.port)")
        defer { redis.shutdown() }
        redis.observeConnection { connected, _ in changes.withLock { $0.append(connected) } }
        try await waitUntil { redis.isConnected }
        #expect(try await redis.reply(RESPCommand("SET", "kept", "1")) == .simpleString("OK"))
        server.stop()
        try await waitUntil { !redis.isConnected }
        #expect(await redis.failure(RESPCommand("GET", "kept"))?.code == .unavailable, "fails at once, never waits")
        try server.restart()
        try await waitUntil(timeout: 10) { redis.isConnected }
        #expect(try await redis.reply(RESPCommand("GET", "kept")).string == "1", "appendfsync always kept it")
        #expect(changes.current.contains(false) && changes.current.last == true, "\(changes.current)")
    }

    @Test func aCommandWithoutAReplyTimesOutAndTheConnectionIsReplaced() async throws {
        let server = try RedisServerProcess(extraArguments: ["--enable-debug-command", "yes"])
        let redis = try client("redis://127.0.0.1:\(server.port)") { $0.commandTimeout = .milliseconds(300) }
        defer { redis.shutdown() }
        try await waitUntil { redis.isConnected }
        let started = ContinuousClock.now
        let error = await redis.failure(RESPCommand("DEBUG", "SLEEP", "2"))
        #expect(error?.code == .timeout)
        #expect(ContinuousClock.now - started < .seconds(2), "did not wait for the reply")
        try await waitUntil(timeout: 10) { redis.isConnected }
        #expect(try await redis.reply(RESPCommand("PING")) == .simpleString("PONG"))
    }

    @Test func speaksTLSToARedissServer() async throws {
        let certificates = try TLSTestCertificates.shared()
        let tlsPort = try RedisServerProcess.freePort()
        let server = try RedisServerProcess(extraArguments: [
            "--tls-port", String(tlsPort), "--tls-cert-file", certificates.localhost.certificateFile,
            "--tls-key-file", certificates.localhost.privateKeyFile, "--tls-ca-cert-file", certificates.caFile,
            "--tls-auth-clients", "no",
        ])
        let trusted = try client("rediss://localhost:\(tlsPort)") { $0.caFile = certificates.caFile }
        defer { trusted.shutdown() }
        try await waitUntil { trusted.isConnected }
        #expect(try await trusted.reply(RESPCommand("SET", "over", "tls")) == .simpleString("OK"))
        #expect(try await trusted.reply(RESPCommand("GET", "over")).string == "tls")
        // Without the CA the server's certificate is not trusted: no connection, a TLS reason.
        let untrusting = try client("rediss://localhost:\(tlsPort)")
        defer { untrusting.shutdown() }
        try await waitUntil { untrusting.lastError != nil }
        #expect(!untrusting.isConnected && untrusting.lastError?.message.contains("certificate") == true,
                "\(String(describing: untrusting.lastError))")
        _ = server
    }

    @Test func nothingListeningIsUnavailableWithTheReason() async throws {
        let port = try RedisServerProcess.freePort()
        let redis = try client("redis://127.0.0.1:\(port)")
        defer { redis.shutdown() }
        try await waitUntil { redis.lastError != nil }
        #expect(redis.lastError?.code == .unavailable && redis.lastError?.message.contains("refused") == true)
    }

    @Test func backoffIsJitteredAndCapped() throws {
        var configuration = RedisConfiguration(url: try RedisURL.parse("redis://h"))
        configuration.reconnectInitial = .milliseconds(100)
        configuration.reconnectMaximum = .seconds(2)
        let first = (0..<200).map { _ in RedisClient.backoff(after: 1, configuration).wholeMilliseconds }
        #expect(first.allSatisfy { (0...100).contains($0) } && Set(first).count > 20, "random up to the initial delay")
        let late = (0..<200).map { _ in RedisClient.backoff(after: 60, configuration).wholeMilliseconds }
        #expect(late.allSatisfy { (0...2000).contains($0) } && late.max()! > 1000, "capped, still spread")
    }
}

extension RedisClient {
    func reply(_ command: RESPCommand) async throws -> RESPValue {
        try await withCheckedThrowingContinuation { continuation in
            send(command) { continuation.resume(with: $0) }
        }
    }

    func replies(_ commands: [RESPCommand]) async -> [Result<RESPValue, RedisError>] {
        await withCheckedContinuation { continuation in send(commands) { continuation.resume(returning: $0) } }
    }

    func failure(_ command: RESPCommand) async -> RedisError? {
        do {
            _ = try await reply(command)
            return nil
        } catch {
            return error as? RedisError
        }
    }

    func evaluate(_ script: RedisScript, keys: [String], arguments: [[UInt8]]) async throws -> RESPValue {
        try await withCheckedThrowingContinuation { continuation in
            evaluate(script, keys: keys, arguments: arguments) { continuation.resume(with: $0) }
        }
    }

    func evaluationFailure(_ script: RedisScript) async -> RedisError? {
        do {
            _ = try await evaluate(script, keys: [], arguments: [])
            return nil
        } catch {
            return error as? RedisError
        }
    }
}

/// Polls `condition` until it holds, or fails the test at the deadline.
func waitUntil(timeout: Double = 5, _ condition: () -> Bool) async throws {
    let deadline = Date().addingTimeInterval(timeout)
    while !condition() {
        guard Date() < deadline else { throw RedisServerError("condition not met within \(timeout) s") }
        try await Task.sleep(for: .milliseconds(10))
    }
}

extension RedisSession {
    func reply(_ command: RESPCommand) async throws -> RESPValue {
        try await withCheckedThrowingContinuation { continuation in
            send(command) { continuation.resume(with: $0) }
        }
    }

    func evaluate(_ script: RedisScript, keys: [String], arguments: [[UInt8]]) async throws -> RESPValue {
        try await withCheckedThrowingContinuation { continuation in
            evaluate(script, keys: keys, arguments: arguments) { continuation.resume(with: $0) }
        }
    }
}
