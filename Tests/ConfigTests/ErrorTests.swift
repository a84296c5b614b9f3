import Testing
@testable import StoreRelayConfig

/// Every class of error, with its exact line and column.
@Suite struct ErrorTests {
    @Test func unknownDirective() {
        let e = expectError("listen 0.0.0.0:8080\n  retries 5\n", .unknownDirective, line: 2, column: 3)
        #expect(e?.description.hasPrefix("routes.conf:2:3: unknown directive 'retries' (expected one of: listen, path,") == true)
    }

    @Test func unknownOptionNamesTheBlockAndTheChoices() {
        let e = expectError("""
            destination billing webhook https://billing.internal/ {
                timeout 5s
                retries 3
            }
            """, .unknownOption, line: 3, column: 5)
        #expect(e?.description == "routes.conf:3:5: unknown option 'retries' in destination 'billing' (expected one of: signing-secret, header, ca-file, format, include-raw, timeout, concurrency, max-attempts, backoff, max-age, rate, order)")
        expectError("destination q file ./q {\n  timeout 1s\n}\n", .unknownOption, line: 2, column: 3, containing: "expected one of: rotate, compress")
        expectError("app com.a {\n  secret x\n}\n", .unknownOption, line: 2, column: 3, containing: "in app 'com.a'")
    }

    @Test func duplicatesOfSingleValuedDirectives() {
        for directive in ["listen 1.2.3.4:5", "admin 1.2.3.4:6", "tls a b", "admin-token \(String(repeating: "t", count: 32))", "data d", "max-body 1", "read-timeout 1s", "header-timeout 1s", "min-body-rate 1KiB", "idle-timeout 1s", "max-connections 8", "max-connections-per-address 8", "dedupe-window 8d", "shutdown-grace 1s", "recent-events 5", "environments sandbox", "shared-secret s"] {
            expectError("\(directive)\n# again\n\(directive)\n", .duplicate, line: 3, column: 1, containing: "already given at line 1")
        }
    }

    @Test func duplicateOptions() {
        expectError("destination d webhook http://h/ {\n timeout 1s\n timeout 2s\n}\n", .duplicate, line: 3, column: 2, containing: "duplicate option 'timeout' in destination 'd'")
        expectError("app com.a {\n apple-id 1\n apple-id 2\n}\n", .duplicate, line: 3, column: 2)
        expectError("destination d file ./d {\n compress gzip\n compress none\n}\n", .duplicate, line: 3, column: 2)
        // header is repeatable
        #expect(errors("destination d webhook http://h/ {\n header A 1\n header A 2\n}\n").isEmpty)
    }

    @Test func duplicateNames() {
        expectError("destination a file ./a\ndestination a webhook http://h/\n", .duplicate, line: 2, column: 13, containing: "duplicate destination 'a' (already declared at line 1")
        expectError("app com.a\napp com.a {\n}\n", .duplicate, line: 2, column: 5, containing: "duplicate app 'com.a'")
        expectError("path /a\npath /a sandbox\n", .duplicate, line: 2, column: 6, containing: "duplicate path '/a'")
    }

    @Test func routeNamingUnknownDestination() {
        expectError("destination a file ./a\nroute * * * -> a, b\n", .unknownDestination, line: 2, column: 19, containing: "unknown destination 'b' (declared: a)")
        expectError("route * * * -> nowhere\n", .unknownDestination, line: 1, column: 16, containing: "no destination is declared")
    }

    @Test func unknownEnvironments() {
        expectError("environments production staging\n", .invalidValue, line: 1, column: 25, containing: "unknown environment 'staging' (expected one of: production, sandbox, xcode, localtesting)")
        expectError("destination a file ./a\nroute Production * * -> a\n", .invalidValue, line: 2, column: 7, containing: "unknown environment 'Production'")
        expectError("destination a file ./a\nroute sandbox,prod * * -> a\n", .invalidValue, line: 2, column: 15, containing: "'prod'")
        expectError("path /x staging\n", .invalidValue, line: 1, column: 9)
        expectError("environments production production\n", .duplicate, line: 1, column: 25)
    }

    @Test func webhookURLs() {
        expectError("destination a webhook ftp://h/x\n", .invalidValue, line: 1, column: 23, containing: "expected http or https")
        expectError("destination a webhook https:///x\n", .invalidValue, line: 1, column: 23, containing: "no host")
        expectError("destination a webhook billing.internal/x\n", .invalidValue, line: 1, column: 23, containing: "not a URL")
        expectError("destination a webhook https://u:p@h/x\n", .invalidValue, line: 1, column: 23, containing: "credentials")
        expectError("destination a webhook https://h:99999/\n", .invalidValue, line: 1, column: 23, containing: "not a port")
        expectError("destination a webhook https://h/x#frag\n", .invalidValue, line: 1, column: 23, containing: "fragment")
        expectError("destination a webhook \"https://h/a b\"\n", .invalidValue, line: 1, column: 23, containing: "space")
        expectError("destination a webhook https://bad_host/\n", .invalidValue, line: 1, column: 23, containing: "host name")
        expectError("destination a mailbox ./x\n", .invalidValue, line: 1, column: 15, containing: "expected webhook, file, redis-stream, nats, amqp or sqs")
        #expect(errors("destination a webhook HTTPS://[::1]:8443\n").isEmpty)
    }

    @Test func paths() {
        expectError("path appstore\n", .invalidValue, line: 1, column: 6, containing: "does not start with '/'")
        expectError("path /a?b=1\n", .invalidValue, line: 1, column: 6)
        expectError("path /healthz\n", .invalidValue, line: 1, column: 6, containing: "reserved")
        expectError("environments production\npath /s sandbox\n", .invalidValue, line: 2, column: 9, containing: "not accepted")
        // The check runs against the final environments, wherever they are written.
        #expect(errors("path /x xcode\nenvironments xcode\n").isEmpty)
    }

    @Test func badNumbers() {
        let block = { (option: String) in "destination d webhook http://h/ {\n    \(option)\n}\n" }
        expectError(block("concurrency 0"), .invalidValue, line: 2, column: 17, containing: "out of range")
        expectError(block("concurrency 2000"), .invalidValue, line: 2, column: 17, containing: "from 1 to 1024")
        expectError(block("concurrency x"), .invalidValue, line: 2, column: 17, containing: "not a whole number")
        expectError(block("max-attempts -1"), .invalidValue, line: 2, column: 18, containing: "negative")
        expectError(block("max-attempts 99999999999999999999999"), .invalidValue, line: 2, column: 18)
        expectError(block("timeout 0s"), .invalidValue, line: 2, column: 13, containing: "zero")
        expectError(block("backoff 1h 1s"), .invalidValue, line: 2, column: 16, containing: "FROM <= TO")
        expectError(block("include-raw maybe"), .invalidValue, line: 2, column: 17, containing: "not yes or no")
        expectError(block("format xml"), .invalidValue, line: 2, column: 12, containing: "normalized, apple or slack")
        expectError(block("signing-secret abc"), .invalidValue, line: 2, column: 20, containing: "whsec_")
        expectError(block("signing-secret whsec_***"), .invalidValue, line: 2, column: 20, containing: "base64")
        expectError(block("signing-secret whsec_"), .invalidValue, line: 2, column: 20, containing: "base64")
        expectError(block("header webhook-signature x"), .invalidValue, line: 2, column: 12, containing: "set by StoreRelay")
        expectError(block("header content-TYPE x"), .invalidValue, line: 2, column: 12, containing: "set by StoreRelay")
        expectError(block("header Host x"), .invalidValue, line: 2, column: 12)
        expectError(block("header StoreRelay-Attempt 1"), .invalidValue, line: 2, column: 12)
        expectError(block("header X:Y v"), .invalidValue, line: 2, column: 12, containing: "not a valid header name")
        expectError("app com.a {\n apple-id 0\n}\n", .invalidValue, line: 2, column: 11)
        expectError("app com/a\n", .invalidValue, line: 1, column: 5, containing: "not a bundle id")
        expectError("destination a/b file ./x\n", .invalidValue, line: 1, column: 13, containing: "not a destination name")
        expectError("destination q file ./q {\n rotate 0 1h\n}\n", .invalidValue, line: 2, column: 9)
        expectError("destination q file ./q {\n compress zip\n}\n", .invalidValue, line: 2, column: 11, containing: "gzip or none")
        expectError("listen 0.0.0.0:65536\n", .invalidValue, line: 1, column: 8, containing: "not a port")
        expectError("listen 256.0.0.1:80\n", .invalidValue, line: 1, column: 8, containing: "not an IPv4 address")
        expectError("listen ::1:80\n", .invalidValue, line: 1, column: 8, containing: "needs brackets")
        expectError("listen [::g]:80\n", .invalidValue, line: 1, column: 8, containing: "not an IPv6 address")
        expectError("listen localhost\n", .invalidValue, line: 1, column: 8, containing: "missing ':PORT'")
    }

    @Test func argumentCounts() {
        expectError("listen\n", .missingArgument, line: 1, column: 7, containing: "expected listen HOST:PORT")
        expectError("listen 1.2.3.4:5 extra\n", .unexpectedArgument, line: 1, column: 18)
        expectError("tls cert.pem\n", .missingArgument, line: 1, column: 13)
        expectError("destination d webhook http://h/ {\n  backoff 1s\n}\n", .missingArgument, line: 2, column: 13)
        expectError("destination d webhook http://h/ {\n  header X-A two words\n}\n", .unexpectedArgument, line: 2, column: 18, containing: "quote a value")
        expectError("destination d file\n", .missingArgument, line: 1, column: 19)
        expectError("environments\n", .missingArgument, line: 1, column: 13)
    }

    @Test func blocks() {
        expectError("app com.a {\n  apple-id 1\n", .unclosedBlock, line: 1, column: 11, containing: "block of app 'com.a' is not closed")
        expectError("listen 1.2.3.4:5\n}\n", .strayBrace, line: 2, column: 1, containing: "no block is open")
        expectError("listen 1.2.3.4:5 {\n}\n", .invalidBlock, line: 1, column: 18, containing: "does not take a block")
        expectError("app com.a {\n} trailing\n", .unexpectedArgument, line: 2, column: 3)
        expectError("app com.a\n{\n}\n", .invalidBlock, line: 2, column: 1)
        expectError("app com.a { apple-id 1 }\n", .invalidBlock, line: 1, column: 11)
        // A missing '}' before the next block: reported at the unclosed block, and the next
        // block is still read normally.
        let found = errors("destination a webhook http://h/ {\n  timeout 1s\ndestination b file ./b {\n  compress gzip\n}\nroute * * * -> a, b\n")
        #expect(found.count == 1)
        #expect(found.first?.code == .unclosedBlock && found.first?.line == 1 && found.first?.column == 33)
        // A top-level directive inside a block also means the '}' was lost: one error, and
        // the directive is read as such (here its unknown destination is the second error).
        let lost = errors("destination a webhook http://h/ {\n  timeout 1s\nroute * * * -> a, nope\n")
        #expect(lost.map(\.code) == [.unclosedBlock, .unknownDestination])
        #expect(lost.first?.message.contains("before line 3") == true)
        #expect(lost.last?.line == 3 && lost.last?.column == 19)
        // shared-secret is both a directive and an app option: inside an app block it is the option.
        #expect(errors("app com.a {\n  shared-secret s\n}\n").isEmpty)
        // A quoted or substituted brace is a value, not syntax.
        expectError("app \"{\"\n", .invalidValue, line: 1, column: 5)
    }

    @Test func missingArrow() {
        expectError("destination a file ./a\nroute * * * a\n", .missingArrow, line: 2, column: 14, containing: "missing '->'")
        expectError("destination a file ./a\nroute * * *->a\n", .missingArrow, line: 2, column: 11, containing: "with spaces around it")
        expectError("destination a file ./a\nroute * * -> a\n", .missingArgument, line: 2, column: 11, containing: "2 columns")
        expectError("destination a file ./a\nroute * * * * -> a\n", .unexpectedArgument, line: 2, column: 13)
        expectError("destination a file ./a\nroute * * * ->\n", .missingArgument, line: 2, column: 15)
        expectError("destination a file ./a\nroute * * * -> a b\n", .unexpectedArgument, line: 2, column: 18, containing: "separated by commas")
        expectError("destination a file ./a\nroute * * refund -> a\n", .invalidValue, line: 2, column: 11, containing: "uppercase")
        expectError("destination a file ./a\nroute * * */X -> a\n", .invalidValue, line: 2, column: 11)
        expectError("destination a file ./a\nroute * * TEST,* -> a\n", .invalidValue, line: 2, column: 16, containing: "cannot be combined")
        expectError("destination a file ./a\nroute * * A/ -> a\n", .invalidValue, line: 2, column: 11)
    }

    @Test func listenersMustDiffer() {
        expectError("listen 127.0.0.1:9090\n", .invalidValue, line: 1, column: 1, containing: "both 127.0.0.1:9090")
        #expect(errors("listen 127.0.0.1:0\nadmin 127.0.0.1:0\n").isEmpty)
    }

    @Test func allErrorsAreCollectedInFileOrder() {
        let found = errors("""
            route * * * -> ghost
            listen nowhere
            destination d webhook http://h/ {
                retries 3
                timeout soon
            }
            }
            data ${MISSING}
            frobnicate
            """)
        #expect(found.map(\.line) == [1, 2, 4, 5, 7, 8, 9])
        #expect(found.map(\.code) == [.unknownDestination, .invalidValue, .unknownOption, .invalidValue, .strayBrace, .undefinedVariable, .unknownDirective])
        let text = ConfigErrors(found).description
        #expect(text.split(separator: "\n").count == 7)
        #expect(text.hasPrefix("routes.conf:1:16: "))
    }

    @Test func brokenDeclarationsDoNotCascade() {
        // The URL is invalid: one error, not also one per route that names the destination.
        let found = errors("destination a webhook ftp://h/ {\n  timeout 1s\n}\nroute * * * -> a\n")
        #expect(found.count == 1)
        // An undefined variable in a block header: the block is skipped silently.
        let second = errors("destination a webhook ${URL} {\n  nonsense here\n}\nroute * * * -> a\n")
        #expect(second.map(\.code) == [.undefinedVariable])
        // Same for an app block: its shared-secret option is not mistaken for the directive.
        let third = errors("app ${BUNDLE} {\n  shared-secret x\n}\n")
        #expect(third.map(\.code) == [.undefinedVariable])
    }

    @Test func unreadableFile() {
        do {
            _ = try GatewayConfiguration.load(path: "/nonexistent/routes.conf", environment: [:])
            Issue.record("expected an error")
        } catch {
            #expect(error.errors.first?.code == .unreadable)
            #expect(error.description.hasPrefix("/nonexistent/routes.conf: cannot read"))
        }
    }
}
