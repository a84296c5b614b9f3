import Testing
@testable import StoreRelayConfig

/// Comments, quoting, `${NAME}` substitution and the lexical errors.
@Suite struct LexerTests {
    @Test func substitutionFromTheInjectedEnvironment() throws {
        let environment = ["TOKEN": "t0k#en with spaces, long enough for a token", "HOST": "billing.internal", "PORT": "8443", "SECRET": "whsec_c2VjcmV0"]
        let c = try parsed("""
            admin-token ${TOKEN}
            destination b webhook https://${HOST}:${PORT}/in {
                signing-secret ${SECRET}
                header X-Price "costs $$5 for ${HOST}"
            }
            shared-secret pa$$word
            """, environment: environment)
        #expect(c.adminToken?.value == "t0k#en with spaces, long enough for a token")
        let o = try webhook(c, "b")
        #expect(o.url.host == "billing.internal" && o.url.port == 8443)
        #expect(o.signingKey == Array("secret".utf8))
        #expect(o.headers.first?.value == "costs $5 for billing.internal")
        #expect(c.sharedSecret?.value == "pa$word")
    }

    @Test func undefinedVariableIsReportedAtItsDollar() {
        expectError("data ./x\nadmin-token abc${NOPE}def\n", .undefinedVariable, line: 2, column: 16, containing: "undefined variable '${NOPE}'")
        expectError("header-less ${A} ${NOPE}\n", .undefinedVariable, line: 1, column: 18, environment: ["A": "a"])
    }

    @Test func substitutedValuesAreNeverSyntax() {
        // A variable holding '{' or '->' is a value, not a block or an arrow.
        expectError("app ${BRACE}\n", .invalidValue, line: 1, column: 5, environment: ["BRACE": "{"])
        expectError("destination a file ./a\nroute * * * ${ARROW} a\n", .missingArrow, line: 2, column: 13, environment: ["ARROW": "->"])
        // An empty variable still yields a (rejected) empty value.
        expectError("admin-token ${EMPTY}\n", .invalidValue, line: 1, column: 13, environment: ["EMPTY": ""], containing: "empty")
    }

    @Test func variablesWithControlCharactersAreRejected() {
        expectError("admin-token ${T}\n", .syntax, line: 1, column: 13, environment: ["T": "abc\n"], containing: "control character")
    }

    @Test func dollarErrors() {
        expectError("admin-token a$b\n", .syntax, line: 1, column: 14, containing: "'$$'")
        expectError("admin-token ${OPEN\n", .syntax, line: 1, column: 13, containing: "unterminated '${'")
        expectError("admin-token ${1BAD}\n", .syntax, line: 1, column: 15, containing: "invalid variable name")
        expectError("admin-token ${}\n", .syntax, line: 1, column: 15)
        expectError("admin-token trailing$\n", .syntax, line: 1, column: 21)
    }

    @Test func quotedValues() throws {
        let c = try parsed(#"""
            admin-token "a \"quoted\" \\ value # not a comment, at length"
            data "./my data"   # a comment after a quoted value
            """#)
        #expect(c.adminToken?.value == #"a "quoted" \ value # not a comment, at length"#)
        #expect(c.dataDirectory == "./my data")
        expectError("data \"./x\n", .syntax, line: 1, column: 6, containing: "unterminated quoted value")
        expectError(#"data "a\nb""# + "\n", .syntax, line: 1, column: 8, containing: "unknown escape")
        expectError("data \"a\"b\n", .syntax, line: 1, column: 9, containing: "space after the closing quote")
        expectError("data a\"b\n", .syntax, line: 1, column: 7, containing: "inside a value")
    }

    @Test func commentsAndWhitespace() throws {
        let c = try parsed("  # indented comment\n\tlisten\t127.0.0.1:1234   # trailing\r\ndata ./a#b\n#listen 1.1.1.1:1\n")
        #expect(c.listen.port == 1234)
        #expect(c.dataDirectory == "./a#b")
    }

    @Test func controlCharactersAndInvalidUTF8() {
        expectError("data ./a\u{01}b\n", .syntax, line: 1, column: 9, containing: "U+0001")
        var bytes = Array("data ./ok\ndata2 \u{e9}".utf8)
        bytes.append(contentsOf: [0xFF, 0xFE])
        do {
            _ = try GatewayConfiguration.parse(bytes: bytes, fileName: "x.conf")
            Issue.record("expected errors")
        } catch {
            #expect(error.errors.first?.code == .syntax)
            #expect(error.errors.first?.line == 2 && error.errors.first?.column == 8)
            #expect(error.errors.first?.description.hasPrefix("x.conf:2:8: invalid UTF-8") == true)
        }
    }

    @Test func byteOrderMarkIsIgnored() throws {
        let c = try parsed("\u{FEFF}listen 127.0.0.1:1\n")
        #expect(c.listen.port == 1)
    }

    @Test func columnsCountScalarsNotBytes() {
        // 'é' is two bytes in UTF-8 but one column.
        expectError("# é\ndata \"é\" x\n", .unexpectedArgument, line: 2, column: 10)
    }
}
