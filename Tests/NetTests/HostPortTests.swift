import StoreRelayNet
import Testing

/// The one `host:port` parser: what it accepts, the sentence it gives for what it refuses.
@Suite struct HostPortTests {
    @Test func acceptsEveryDocumentedForm() throws {
        #expect(try HostPort.parse("0.0.0.0:8080") == HostPort(host: "0.0.0.0", port: 8080, kind: .ipv4))
        #expect(try HostPort.parse("[::]:0") == HostPort(host: "::", port: 0, kind: .ipv6))
        #expect(try HostPort.parse("[fe80::1:2]:443").host == "fe80::1:2")
        #expect(try HostPort.parse("gateway-1.example.com:80").kind == .hostname)
        #expect(try HostPort.parse("localhost:65535").port == 65535)
    }

    @Test(arguments: [
        ("0.0.0.0", "missing ':PORT'"),
        ("1.2.3:80", "not an IPv4 address"),
        ("1.2.3.4.5:80", "not an IPv4 address"),
        ("256.1.1.1:80", "not an IPv4 address"),
        ("01234.1.1.1:1", "not an IPv4 address"),
        (":80", "missing host"),
        ("[::1]80", "missing ':PORT'"),
        ("[::1", "missing ']'"),
        ("[1.2.3.4]:80", "not an IPv6 address"),
        ("::1:80", "needs brackets"),
        ("host:-1", "not a port"),
        ("host:", "not a port"),
        ("host:65536", "not a port"),
        ("host:+80", "not a port"),
        ("-host:1", "not a valid host name"),
        ("a..b:1", "not a valid host name"),
        ("h_st:1", "not a valid host name"),
    ])
    func refusesWithTheReason(text: String, reason: String) {
        #expect {
            try HostPort.parse(text)
        } throws: { error in
            (error as? AddressError)?.description.contains(reason) == true
        }
    }

    @Test func formatsAsItParses() throws {
        for text in ["0.0.0.0:8080", "[::1]:9090", "localhost:1"] {
            #expect(try HostPort.parse(text).description == text)
        }
        #expect(try HostPort.parse("[::1]:0").with(port: 4321).description == "[::1]:4321")
    }

    /// Random printable strings never crash the parser, and whatever it accepts formats back
    /// to an address that parses to the same value.
    @Test func randomInputNeverCrashesAndAcceptedInputRoundTrips() {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("0123456789abcdefx.:[]-_%+ ")
        for _ in 0..<20_000 {
            let length = Int.random(in: 0...24, using: &generator)
            let text = String((0..<length).map { _ in alphabet.randomElement(using: &generator)! })
            guard let parsed = try? HostPort.parse(text) else { continue }
            #expect((try? HostPort.parse(parsed.description)) == parsed, "\(text)")
        }
    }
}
