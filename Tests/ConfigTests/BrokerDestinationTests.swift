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
        expectError("destination d kafka kafka://h\n", .invalidValue, line: 1, column: 15, containing: "expected webhook, file, redis-stream, nats, amqp or sqs")
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

    @Test func aPlaintextPasswordToAnotherHostIsWarnedAbout() throws {
        let warnings = try parsed("""
            destination remote amqp amqp://u:p@rabbit.internal/%2f {
                exchange x
            }
            destination local amqp amqp://u:p@127.0.0.1/%2f {
                exchange x
            }
            destination tls amqp amqps://u:p@rabbit.internal/%2f {
                exchange x
            }
            """).warnings
        #expect(warnings.filter { $0.contains("AMQP password in plaintext") }.count == 1)
        #expect(warnings.contains { $0.hasPrefix("destination remote sends its AMQP password in plaintext to rabbit.internal") })
    }

    @Test func theCheckReportHidesThePassword() throws {
        let text = "destination d amqp amqp://relay:hunter2@127.0.0.1:5672/billing {\n exchange appstore\n}\nroute * * * -> d\n"
        let report = try parsed(text).checkReport()
        #expect(!report.contains("hunter2"))
        #expect(report.contains("d  amqp amqp://relay@127.0.0.1:5672/billing (password <set>)"))
        #expect(report.contains("exchange appstore, routing-key {environment}.{type}, format normalized, include-raw no"))
        #expect(report.contains("max-age 3d, rate unlimited, heartbeat 30s"))
        let off = try parsed("destination d amqp amqp://h {\n exchange x\n heartbeat 0\n}\n").checkReport()
        #expect(off.contains("heartbeat 0 (off)"), "\(off)")
    }
}

/// The `sqs` destination kind's block: credentials from the block or the environment, the
/// region, FIFO queues, and every malformed line.
struct SQSDestinationTests {
    private func sqs(_ configuration: GatewayConfiguration, _ name: String) throws -> SQSOptions {
        guard case .sqs(let options)? = configuration.destination(named: name)?.kind else {
            Issue.record("no sqs destination '\(name)'")
            throw ConfigErrors([])
        }
        return options
    }

    private let credentials = "    access-key-id AKIAIOSFODNN7EXAMPLE\n    secret-access-key wJalrXUtnFEMI/K7MDENG\n"

    private func block(_ option: String) -> String {
        "destination d sqs https://sqs.eu-west-1.amazonaws.com/123456789012/appstore {\n\(credentials)    \(option)\n}\n"
    }

    @Test func theSpecExampleParses() throws {
        let text = """
            destination crm sqs https://sqs.eu-west-1.amazonaws.com/123456789012/appstore {
                region eu-west-1
                access-key-id ${AWS_ACCESS_KEY_ID}
                secret-access-key ${AWS_SECRET_ACCESS_KEY}
                max-attempts 5
            }
            """
        let options = try sqs(try parsed(text, environment: ["AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "s3cret"]), "crm")
        #expect(options.region == "eu-west-1" && options.accessKeyId == "AKID" && options.secretAccessKey.value == "s3cret")
        #expect(!options.credentialsFromEnvironment && options.sessionToken == nil && !options.isFIFO)
        #expect(options.queueURL.absoluteString == "https://sqs.eu-west-1.amazonaws.com/123456789012/appstore")
        #expect(options.delivery.maxAttempts == 5)
    }

    @Test func credentialsAndRegionComeFromTheEnvironmentWhenTheBlockHasNone() throws {
        let text = "destination d sqs https://sqs.ap-south-1.amazonaws.com/1/orders.fifo\n"
        let options = try sqs(try parsed(text, environment: ["AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "s", "AWS_SESSION_TOKEN": "t"]), "d")
        #expect(options.credentialsFromEnvironment && options.accessKeyId == "AKID" && options.sessionToken?.value == "t")
        #expect(options.region == "ap-south-1" && options.isFIFO)
        let fromRegion = try sqs(try parsed(text, environment: ["AWS_ACCESS_KEY_ID": "A", "AWS_SECRET_ACCESS_KEY": "s", "AWS_REGION": "us-west-2"]), "d")
        #expect(fromRegion.region == "us-west-2")
    }

    @Test func aLoopbackEmulatorMayUsePlainHTTP() throws {
        let text = """
            destination d sqs http://127.0.0.1:4566/000000000000/events {
                region us-east-1
            \(credentials)    session-token FQoGZXIvYXdz
                endpoint http://localhost:4566
                ca-file ./ca.pem
            }
            """
        let options = try sqs(try parsed(text), "d")
        #expect(options.endpoint?.absoluteString == "http://localhost:4566" && options.sessionToken?.value == "FQoGZXIvYXdz")
        #expect(options.caFile == "./ca.pem")
    }

    @Test func malformedQueueURLs() {
        expectError("destination d sqs http://sqs.eu-west-1.amazonaws.com/1/q\n", .invalidValue, line: 1, column: 19, containing: "only for a loopback host")
        expectError("destination d sqs https://sqs.eu-west-1.amazonaws.com/q\n", .invalidValue, line: 1, column: 19, containing: "/ACCOUNT/QUEUE")
        expectError("destination d sqs https://sqs.eu-west-1.amazonaws.com/1/q?x=1\n", .invalidValue, line: 1, column: 19, containing: "/ACCOUNT/QUEUE")
        expectError("destination d sqs https://sqs.eu-west-1.amazonaws.com/1/bad%20name\n", .invalidValue, line: 1, column: 19, containing: "not a queue name")
        expectError("destination d sqs ftp://h/1/q\n", .invalidValue, line: 1, column: 19)
    }

    @Test func missingCredentialsOrRegionAreNamed() {
        expectError("destination d sqs https://sqs.eu-west-1.amazonaws.com/1/q\n", .missingArgument, line: 1, column: 1,
                    containing: "has no credentials (expected access-key-id and secret-access-key in the block, or AWS_ACCESS_KEY_ID")
        expectError("destination d sqs https://sqs.eu-west-1.amazonaws.com/1/q {\n access-key-id A\n}\n", .missingArgument, line: 1, column: 59,
                    containing: "needs 'secret-access-key' too")
        expectError("destination d sqs https://vpce-1.sqs.example.internal/1/q {\n\(credentials)}\n", .missingArgument, line: 1, column: 59,
                    containing: "has no region")
    }

    @Test func malformedOptions() {
        expectError(block("region EU_WEST"), .invalidValue, line: 4, column: 12, containing: "not a region")
        expectError(block("region"), .missingArgument, line: 4, column: 11, containing: "expected region NAME")
        expectError(block("endpoint http://sqs.example.com"), .invalidValue, line: 4, column: 14, containing: "only for a loopback host")
        expectError(block("endpoint https://vpce.example.com/path"), .invalidValue, line: 4, column: 14, containing: "has a path")
        expectError(block("session-token \"\""), .invalidValue, line: 4, column: 19, containing: "empty value")
        expectError(block("access-key-id again"), .duplicate, line: 4, column: 5, containing: "duplicate option 'access-key-id'")
        expectError(block("max-attempts 0"), .invalidValue, line: 4, column: 18)
        let unknown = expectError(block("exchange x"), .unknownOption, line: 4, column: 5)
        #expect(unknown?.message.contains("expected one of: region, access-key-id, secret-access-key, session-token, endpoint, ca-file, format") == true)
    }

    @Test func theCheckReportHidesTheSecrets() throws {
        let text = "destination d sqs https://sqs.eu-west-1.amazonaws.com/1/q.fifo {\n access-key-id AKID\n secret-access-key hunter2\n session-token tok3n\n}\nroute * * * -> d\n"
        let report = try parsed(text).checkReport()
        #expect(!report.contains("hunter2") && !report.contains("tok3n"))
        #expect(report.contains("d  sqs https://sqs.eu-west-1.amazonaws.com/1/q.fifo (FIFO)"))
        #expect(report.contains("region eu-west-1, access-key-id AKID (from the block), secret-access-key <set>, session-token <set>"))
    }
}
