import Testing
@testable import StoreRelayConfig

/// The `amqp` destination kind's block: what it holds, its defaults, and every malformed line.
struct BrokerDestinationTests {
    private func amqp(_ configuration: GatewayConfiguration, _ name: String) throws -> AMQPOptions {
        guard case .amqp(let options)? = configuration.destination(named: name)?.kind else {
            Issue.record("no amqp destination '\(name)'")
            throw ConfigErrors([])
        }
        return options
    }

    private func block(_ option: String) -> String {
        "destination d amqp amqp://u:p@127.0.0.1/%2f {\n    exchange appstore\n    \(option)\n}\n"
    }

    @Test func theSpecExampleParses() throws {
        let text = """
            destination billing amqp amqp://user:pa%2Fss@127.0.0.1:5672/%2f {
                exchange appstore
                routing-key {environment}.{type}
                timeout 5s
                max-attempts 3
                format apple
            }
            route * * * -> billing
            """
        let options = try amqp(try parsed(text), "billing")
        #expect(options.url.user == "user" && options.url.password == "pa/ss" && options.url.virtualHost == "/")
        #expect(options.exchange == "appstore" && options.routingKey.description == "{environment}.{type}")
        #expect(options.delivery.timeout == .seconds(5) && options.delivery.maxAttempts == 3 && options.delivery.format == .apple)
        #expect(options.heartbeat == .seconds(30) && options.caFile == nil)
    }

    @Test func optionalOptions() throws {
        let text = """
            destination d amqp amqps://u:p@broker.internal/billing {
                exchange ""
                routing-key appstore.{bundleId}.{subtype}
                ca-file /etc/ssl/broker-ca.pem
                heartbeat 0
            }
            """
        let options = try amqp(try parsed(text), "d")
        #expect(options.url.usesTLS && options.url.port == 5671 && options.url.virtualHost == "billing")
        #expect(options.exchange == "" && options.routingKey.description == "appstore.{bundleId}.{subtype}")
        #expect(options.caFile == "/etc/ssl/broker-ca.pem" && options.heartbeat == .zero)
        #expect(try amqp(try parsed(block("heartbeat 2m")), "d").heartbeat == .seconds(120))
    }

    @Test func theRoutingKeyDefaultsToEnvironmentDotType() throws {
        let options = try amqp(try parsed("destination d amqp amqp://h {\n exchange x\n}\n"), "d")
        #expect(options.routingKey.description == "{environment}.{type}")
    }

    @Test func malformedURLs() {
        expectError("destination d amqp http://h/\n", .invalidValue, line: 1, column: 20, containing: "expected amqp://user:password@host:port/vhost")
        expectError("destination d amqp amqp://u:p@h:0/\n", .invalidValue, line: 1, column: 20, containing: "port 0")
        expectError("destination d amqp amqp://u:p@h/a/b\n", .invalidValue, line: 1, column: 20, containing: "%2f")
        let error = expectError("destination d amqp amqp://u:sec%zzret@h/\n", .invalidValue, line: 1, column: 20, containing: "two hex digits")
        #expect(error?.message.contains("sec") == false)
        expectError("destination d kafka kafka://h\n", .invalidValue, line: 1, column: 15, containing: "expected webhook, file or amqp")
    }

    @Test func theExchangeIsRequired() {
        expectError("destination d amqp amqp://h {\n routing-key a.b\n}\n", .missingArgument, line: 1, column: 29,
                    containing: "destination 'd' needs 'exchange'")
        expectError("destination d amqp amqp://h\n", .missingArgument, line: 1, column: 1, containing: "needs 'exchange'")
    }

    @Test func malformedOptions() {
        expectError(block("routing-key {environment}.{kind}"), .invalidValue, line: 3, column: 17, containing: "unknown placeholder '{kind}'")
        expectError(block("routing-key {environment"), .invalidValue, line: 3, column: 17, containing: "not closed")
        expectError(block("routing-key \(String(repeating: "k", count: 256))"), .invalidValue, line: 3, column: 17, containing: "at most 255")
        expectError(block("routing-key"), .missingArgument, line: 3, column: 16, containing: "expected routing-key KEY")
        expectError(block("routing-key a b"), .unexpectedArgument, line: 3, column: 19)
        expectError(block("heartbeat 500ms"), .invalidValue, line: 3, column: 15, containing: "between 1s and 65535s")
        expectError(block("heartbeat soon"), .invalidValue, line: 3, column: 15, containing: "invalid heartbeat")
        expectError(block("ca-file \"\""), .invalidValue, line: 3, column: 13, containing: "empty path")
        expectError(block("timeout 0s"), .invalidValue, line: 3, column: 13, containing: "invalid timeout")
        expectError(block("exchange again"), .duplicate, line: 3, column: 5, containing: "duplicate option 'exchange'")
        expectError("destination d amqp amqp://h {\n exchange \(String(repeating: "e", count: 256))\n}\n", .invalidValue, line: 2, column: 11,
                    containing: "at most 255")
        let unknown = expectError(block("signing-secret whsec_AAAA"), .unknownOption, line: 3, column: 5)
        #expect(unknown?.message.contains("expected one of: exchange, routing-key, ca-file, heartbeat, format") == true)
    }

    @Test func aBlockClosedByAnotherDirectiveSaysSo() {
        expectError("destination d amqp amqp://h {\n exchange x\nroute * * * -> d\n", .unclosedBlock, line: 1, column: 29)
    }

    @Test func theCheckReportHidesThePassword() throws {
        let text = "destination d amqp amqp://relay:hunter2@127.0.0.1:5672/billing {\n exchange appstore\n}\nroute * * * -> d\n"
        let report = try parsed(text).checkReport()
        #expect(!report.contains("hunter2"))
        #expect(report.contains("d  amqp amqp://relay@127.0.0.1:5672/billing (password <set>)"))
        #expect(report.contains("exchange appstore, routing-key {environment}.{type}, format normalized, include-raw no"))
        #expect(report.contains("max-age 3d, heartbeat 30s"))
    }
}
