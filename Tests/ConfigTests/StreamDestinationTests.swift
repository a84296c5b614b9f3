import Testing
@testable import StoreRelayConfig
import StoreRelayNet

/// `destination NAME redis-stream URL { ... }` and `destination NAME nats URL { ... }` (SPEC
/// "Destinations beyond webhooks"): their own options, the common delivery options, the
/// `check` report, and an error with line, column and the expected form for every bad line.
@Suite struct StreamDestinationTests {
    private func redisStream(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> RedisStreamOptions {
        guard case .redisStream(let options)? = try parsed(text, sourceLocation: sourceLocation).destination(named: "d")?.kind else {
            Issue.record("no redis-stream destination 'd'", sourceLocation: sourceLocation)
            throw ConfigErrors([])
        }
        return options
    }

    private func nats(_ text: String, environment: [String: String] = [:], sourceLocation: SourceLocation = #_sourceLocation) throws -> NATSOptions {
        let configuration = try parsed(text, environment: environment, sourceLocation: sourceLocation)
        guard case .nats(let options)? = configuration.destination(named: "d")?.kind else {
            Issue.record("no nats destination 'd'", sourceLocation: sourceLocation)
            throw ConfigErrors([])
        }
        return options
    }

    @Test func redisStreamWithEveryOption() throws {
        let options = try redisStream("""
            destination d redis-stream rediss://:s3cret@cache.internal:6380/2 {
                stream appstore:{environment}:{type}
                max-length 1000000
                ca-file ./ca.pem
                format apple
                timeout 3s
                concurrency 8
                max-attempts 5
                backoff 2s 1m
            }
            """)
        #expect(options.url.usesTLS && options.url.host == "cache.internal" && options.url.port == 6380)
        #expect(options.url.password == "s3cret" && options.url.database == 2)
        #expect(options.stream.description == "appstore:{environment}:{type}" && !options.stream.isConstant)
        #expect(options.maxLength == 1_000_000 && options.caFile == "./ca.pem")
        #expect(options.delivery.format == .apple && options.delivery.timeout == .seconds(3))
        #expect(options.delivery.concurrency == 8 && options.delivery.maxAttempts == 5)
        #expect(options.delivery.backoffInitial == .seconds(2) && options.delivery.backoffMaximum == .seconds(60))
    }

    @Test func redisStreamDefaults() throws {
        let options = try redisStream("destination d redis-stream redis://127.0.0.1:6379/0\n")
        #expect(options.stream.description == "appstore:events" && options.maxLength == nil)
        #expect(options.delivery == DeliveryOptions())
    }

    @Test func natsWithUserAndPassword() throws {
        let options = try nats("""
            destination d nats nats://127.0.0.1:4222 {
                subject appstore.{environment}.{type}
                user ${NATS_USER}
                password ${NATS_PASSWORD}
                timeout 2s
            }
            """, environment: ["NATS_USER": "relay", "NATS_PASSWORD": "pa55"])
        #expect(!options.url.requiresTLS && options.url.host == "127.0.0.1" && options.url.port == 4222)
        #expect(options.subject.description == "appstore.{environment}.{type}")
        #expect(options.user == "relay" && options.password?.value == "pa55" && options.token == nil)
        #expect(options.delivery.timeout == .seconds(2))
    }

    @Test func natsWithATokenOverTLSAndDefaults() throws {
        let options = try nats("destination d nats tls://nats.internal {\n  token abc\n  ca-file ./ca.pem\n}\n")
        #expect(options.url.requiresTLS && options.url.port == NATSURL.defaultPort)
        #expect(options.token?.value == "abc" && options.user == nil && options.caFile == "./ca.pem")
        #expect(options.subject.description == "appstore.{environment}.{type}")
        let plain = try nats("destination d nats nats://[::1]\n")
        #expect(plain.url.hostKind == .ipv6 && plain.url.port == 4222 && plain.url.description == "nats://[::1]:4222")
    }

    @Test func theReportShowsEachKindWithoutSecrets() throws {
        let report = try parsed("""
            destination ledger redis-stream redis://:hunter2@127.0.0.1:6379/1 {
                stream appstore:events
                max-length 1000
            }
            destination audit nats nats://127.0.0.1:4222 {
                user relay
                password hunter3
            }
            destination billing nats nats://127.0.0.1:4222 {
                token hunter4
            }
            route * * * -> ledger, audit, billing
            """).checkReport()
        #expect(report.contains("ledger  redis-stream redis://:***@127.0.0.1:6379/1"))
        #expect(report.contains("stream appstore:events, max-length 1000, format normalized, include-raw no"))
        #expect(report.contains("audit  nats nats://127.0.0.1:4222"))
        #expect(report.contains("subject appstore.{environment}.{type}, user relay, password <set>"))
        #expect(report.contains("subject appstore.{environment}.{type}, token <set>"))
        #expect(report.contains("timeout 10s, concurrency 4, max-attempts 12"))
        for secret in ["hunter2", "hunter3", "hunter4"] { #expect(!report.contains(secret)) }
    }

    @Test func malformedHeaderLines() {
        expectError("destination d redis-stream http://127.0.0.1/\n", .invalidValue, line: 1, column: 28,
                    containing: "invalid redis-stream URL: 'http://127.0.0.1/' is not a Redis URL (expected redis://")
        expectError("destination d redis-stream redis://h:0/0\n", .invalidValue, line: 1, column: 28, containing: "port 0")
        expectError("destination d redis-stream redis://h:6379/x\n", .invalidValue, line: 1, column: 28, containing: "not a database number")
        expectError("destination d nats https://h:4222\n", .invalidValue, line: 1, column: 20,
                    containing: "invalid nats URL: 'https://h:4222' is not a NATS URL (expected nats://host:port or tls://host:port)")
        expectError("destination d nats nats://u:p@h:4222\n", .invalidValue, line: 1, column: 20, containing: "credentials in a NATS URL are not read")
        expectError("destination d nats nats://h:4222/x\n", .invalidValue, line: 1, column: 20, containing: "no path or query")
        expectError("destination d nats nats://h:99999\n", .invalidValue, line: 1, column: 20)
        expectError("destination d nats\n", .missingArgument, line: 1, column: 19, containing: "nats nats://HOST:PORT")
        expectError("destination d kafka k://h\n", .invalidValue, line: 1, column: 15, containing: "expected webhook, file, redis-stream, nats, amqp or sqs")
    }

    @Test func malformedRedisStreamOptions() {
        let block = { (option: String) in "destination d redis-stream redis://127.0.0.1:6379/0 {\n    \(option)\n}\n" }
        expectError(block("stream appstore:{enviroment}"), .invalidValue, line: 2, column: 12, containing: "unknown placeholder '{enviroment}'")
        expectError(block("stream a{type"), .invalidValue, line: 2, column: 12, containing: "'{' is not closed")
        expectError(block("stream"), .missingArgument, line: 2, column: 11, containing: "stream NAME")
        expectError(block("stream a b"), .unexpectedArgument, line: 2, column: 14)
        expectError(block("max-length 0"), .invalidValue, line: 2, column: 16, containing: "invalid max-length")
        expectError(block("max-length many"), .invalidValue, line: 2, column: 16, containing: "not a whole number")
        expectError(block("ca-file"), .missingArgument, line: 2, column: 12, containing: "ca-file PEM-FILE")
        expectError(block("timeout 0s"), .invalidValue, line: 2, column: 13, containing: "zero")
        expectError(block("format xml"), .invalidValue, line: 2, column: 12, containing: "normalized or apple")
        expectError(block("subject a.b"), .unknownOption, line: 2, column: 5,
                    containing: "(expected one of: stream, max-length, ca-file, format, include-raw, timeout, concurrency, max-attempts, backoff, max-age, rate, order)")
        expectError(block("stream a\n    stream b"), .duplicate, line: 3, column: 5, containing: "duplicate option 'stream'")
    }

    @Test func malformedNATSOptions() {
        let block = { (option: String) in "destination d nats nats://127.0.0.1:4222 {\n    \(option)\n}\n" }
        expectError(block("subject appstore.*"), .invalidValue, line: 2, column: 13, containing: "has a wildcard")
        expectError(block("subject appstore.>"), .invalidValue, line: 2, column: 13, containing: "has a wildcard")
        expectError(block("subject appstore..{type}"), .invalidValue, line: 2, column: 13, containing: "has an empty token")
        expectError(block("subject .appstore"), .invalidValue, line: 2, column: 13, containing: "has an empty token")
        expectError(block("subject appstore.{typ}"), .invalidValue, line: 2, column: 13, containing: "unknown placeholder '{typ}'")
        expectError(block("subject"), .missingArgument, line: 2, column: 12, containing: "subject SUBJECT")
        expectError(block("token ${EMPTY}"), .invalidValue, line: 2, column: 11, environment: ["EMPTY": ""], containing: "empty value")
        expectError(block("user ${EMPTY}"), .invalidValue, line: 2, column: 10, environment: ["EMPTY": ""], containing: "empty user name")
        expectError(block("stream s"), .unknownOption, line: 2, column: 5,
                    containing: "(expected one of: subject, user, password, token, ca-file, format, include-raw, timeout, concurrency, max-attempts, backoff, max-age, rate, order)")
        expectError(block("user relay"), .invalidValue, line: 1, column: 42,
                    containing: "destination 'd' has user (line 2) without password (expected both, or token alone)")
        expectError(block("password p"), .invalidValue, line: 1, column: 42, containing: "has password (line 2) without user")
        expectError(block("token t\n    user u\n    password p"), .invalidValue, line: 1, column: 42,
                    containing: "has both token and user/password")
    }

    @Test func aMissingBraceBeforeTheNextDestinationIsReported() throws {
        let found = errors("""
            destination a nats nats://127.0.0.1:4222 {
                subject x.y
            destination b redis-stream redis://127.0.0.1:6379/0 {
                stream s
            }
            route * * * -> a, b
            """)
        #expect(found.count == 1 && found.first?.code == .unclosedBlock && found.first?.line == 1)
    }
}
