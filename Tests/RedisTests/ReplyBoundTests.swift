import Foundation
import StoreRelayCore
@testable import StoreRelayNet
import Testing

/// Reply bounds (issue 26, point 4): a server that answers with more than the client accepts
/// (64 MiB and 2^20 elements in all, nested ones included) loses its connection as soon as
/// the size shows, with a clear error, rather than making the client buffer gigabytes for the
/// length of the command timeout; and what it said reaches logs and errors truncated.
@Suite(.serialized)
struct ReplyBoundTests {
    private func client(_ server: HostileRESPServer, log: MemorySink = MemorySink()) -> RedisClient {
        var configuration = RedisConfiguration(url: try! RedisURL.parse("redis://127.0.0.1:\(server.port)"))
        configuration.connectTimeout = .seconds(5)
        // Far longer than the test waits: whatever ends the connection, it is not the timeout.
        configuration.commandTimeout = .seconds(60)
        configuration.reconnectInitial = .seconds(30)
        configuration.reconnectMaximum = .seconds(30)
        configuration.logger = Logger(label: "redis", level: .debug, sink: log)
        let client = RedisClient(configuration: configuration)
        client.start()
        return client
    }

    /// `PING`'s failure, after the greeting succeeded.
    private func pingFailure(_ redis: RedisClient) async throws -> RedisError? {
        try await waitUntil { redis.isConnected }
        let started = ContinuousClock.now
        let failure = await redis.failure(RESPCommand("PING"))
        #expect(ContinuousClock.now - started < .seconds(55), "ended by the bound, not by the 60 s timeout")
        return failure
    }

    @Test func aHugeBulkStringEndsTheConnectionWhenAnnounced() async throws {
        let server = try HostileRESPServer { send in
            guard send(Array("$4294967296\r\n".utf8)) else { return }
            let block = [UInt8](repeating: 120, count: 1 << 16)
            for _ in 0..<(1 << 16) where send(block) {}
        }
        let redis = client(server)
        defer { redis.shutdown() }
        let failure = try await pingFailure(redis)
        #expect(failure?.code == .replyTooLarge, "\(String(describing: failure))")
        #expect(failure?.message.contains("4294967296 bytes") == true && failure?.message.contains("64 MiB") == true)
        try await waitUntil(timeout: 20) { server.clientClosed }
        #expect(server.sent < 64 << 20, "the client did not read up to the announced size: \(server.sent)")
    }

    /// Reproduced in issue 26: each element small, the reply gigabytes in all.
    @Test func manySmallElementsEndTheConnectionAt64MiBInAll() async throws {
        let server = try HostileRESPServer { send in
            guard send(Array("*1048576\r\n".utf8)) else { return }
            let element = Array("$1024\r\n".utf8) + [UInt8](repeating: 121, count: 1024) + [13, 10]
            let batch = Array((0..<64).map { _ in element }.joined())
            for _ in 0..<(1 << 14) where send(batch) {}
        }
        let redis = client(server)
        defer { redis.shutdown() }
        let failure = try await pingFailure(redis)
        #expect(failure?.code == .replyTooLarge && failure?.message.contains("64 MiB") == true, "\(String(describing: failure))")
        try await waitUntil(timeout: 30) { server.clientClosed }
        // What the client parsed is bounded; socket buffers hold a few MiB more at most.
        #expect(server.sent < (64 << 20) + (32 << 20), "\(server.sent) bytes went out before the client closed")
    }

    @Test(arguments: [
        // 2,000 arrays of 2,000 integers: 4 MB, but over 2^20 elements in all.
        ("*2000\r\n" + String(repeating: "*2000\r\n" + String(repeating: ":1\r\n", count: 2000), count: 600), "elements"),
        (String(repeating: "*1\r\n", count: 100), "nested deeper"),
        ("+" + String(repeating: "a", count: 200_000) + "\r\n", "line longer"),
    ])
    func nestedElementsDepthAndLinesAreBoundToo(_ attack: (String, String)) async throws {
        let bytes = Array(attack.0.utf8)
        let server = try HostileRESPServer { send in _ = send(bytes) }
        let redis = client(server)
        defer { redis.shutdown() }
        let failure = try await pingFailure(redis)
        #expect(failure?.code == .replyTooLarge && failure?.message.contains(attack.1) == true, "\(String(describing: failure))")
    }

    /// A refusal quoting a 200 KB error reply, or a log line about it, stays a few hundred bytes.
    @Test func whatAServerSaysIsQuotedTruncated() async throws {
        let log = MemorySink()
        let server = try HostileRESPServer(greeting: "-ERR " + String(repeating: "A", count: 60_000) + "\r\n") { _ in }
        let redis = client(server, log: log)
        defer { redis.shutdown() }
        try await waitUntil { redis.lastError != nil }
        let error = try #require(redis.lastError)
        #expect(error.code == .refused && error.message.contains("-ERR") == false && error.message.contains("ERR AAAA"))
        #expect(error.message.utf8.count < 600, "\(error.message.utf8.count) bytes")
        try await waitUntil { !log.lines.isEmpty }
        #expect(log.lines.allSatisfy { $0.utf8.count < 1_500 }, "\(log.lines.map(\.utf8.count))")
    }

    @Test func repliesAreDescribedInAFewHundredBytes() {
        let huge = RESPValue.bulkString([UInt8](repeating: 65, count: 50 << 20))
        #expect(huge.description.utf8.count <= RESPValue.describedBytes + 4 && huge.description.hasSuffix("…"))
        let wide = RESPValue.array((0..<100_000).map { .integer(Int64($0)) })
        #expect(wide.description.utf8.count <= RESPValue.describedBytes + 4 && wide.description.hasPrefix("[:0, :1"))
        let deep = RESPValue.array([.array([.error(String(repeating: "E", count: 70_000)), .simpleString("after")])])
        #expect(deep.description.utf8.count <= RESPValue.describedBytes + 4 && !deep.description.contains("after"))
        #expect(RESPValue.array([.bulkString(Array("a".utf8)), .integer(1), .bulkString(nil)]).description == #"["a", :1, (nil)]"#)
        let long = RedisError(.protocolError, String(repeating: "x", count: 10_000))
        #expect(long.message.utf8.count < 600 && long.message.hasSuffix("(10000 bytes in all)"))
    }
}
