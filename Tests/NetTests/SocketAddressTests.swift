import StoreRelayNet
import Testing

@Suite struct SocketAddressTests {
    @Test func ipLiteralsAndTheirText() {
        #expect(SocketAddress(ip: "127.0.0.1", port: 80)?.description == "127.0.0.1:80")
        #expect(SocketAddress(ip: "::1", port: 8443)?.description == "[::1]:8443")
        #expect(SocketAddress(ip: "localhost", port: 80) == nil)
        #expect(SocketAddress(ip: "1.2.3", port: 80) == nil)
    }

    @Test func equalityAndHashingUseTheAddressOnly() {
        let a = SocketAddress(ip: "10.0.0.1", port: 1)!
        #expect(a == SocketAddress(ip: "10.0.0.1", port: 1)!)
        #expect(a != SocketAddress(ip: "10.0.0.1", port: 2)!)
        #expect(a != SocketAddress(ip: "::ffff:10.0.0.1", port: 1)!)
        #expect(Set([a, SocketAddress(ip: "10.0.0.1", port: 1)!]).count == 1)
    }

    @Test func resolvesLoopbackAndListensOnAFreePort() throws {
        let addresses = try SystemResolver.resolve(host: "127.0.0.1", port: 9, passive: false)
        #expect(addresses == [SocketAddress(ip: "127.0.0.1", port: 9)!])
        let (fd, bound) = try ListeningSocket.open(HostPort(host: "127.0.0.1", port: 0, kind: .ipv4), backlog: 4)
        defer { SystemCalls.close(fd) }
        #expect(bound.port != 0 && bound.description.hasPrefix("127.0.0.1:"))
        #expect(throws: SocketError.self) {
            try ListeningSocket.open(HostPort(host: "127.0.0.1", port: bound.port, kind: .ipv4), backlog: 4)
        }
    }

    @Test func anUnknownHostIsAResolutionError() {
        #expect {
            try SystemResolver.resolve(host: "no-such-host.invalid", port: 80, passive: false)
        } throws: { error in
            (error as? SocketError)?.code == .resolutionFailed
        }
    }
}

/// The client a per-address connection limit counts (`SocketAddress.addressGroup`).
@Suite struct SocketAddressGroupTests {
    static func group(_ ip: String) -> String? { SocketAddress(ip: ip, port: 443)?.addressGroup }

    @Test func anIPv4ClientIsItsAddress() {
        #expect(Self.group("203.0.113.9") == "203.0.113.9")
        #expect(Self.group("127.0.0.2") != Self.group("127.0.0.3"))
    }

    /// One host picks a new address from its /64 for every connection: all count as one.
    @Test func anIPv6ClientIsItsSlash64() {
        #expect(Self.group("2001:db8:1:2::1") == "2001:db8:1:2::/64")
        #expect(Self.group("2001:db8:1:2:ffff:ffff:ffff:ffff") == "2001:db8:1:2::/64")
        #expect(Self.group("2001:db8:1:2:a:b:c:d") == Self.group("2001:db8:1:2::99"))
        #expect(Self.group("2001:db8:1:3::1") == "2001:db8:1:3::/64")
        #expect(Self.group("::1") == "::/64")
    }

    /// What a dual-stack listener reports for an IPv4 client is that IPv4 client.
    @Test func anIPv4MappedAddressIsTheIPv4Client() {
        #expect(Self.group("::ffff:203.0.113.9") == "203.0.113.9")
        #expect(Self.group("::ffff:203.0.113.9") != Self.group("::ffff:203.0.113.10"))
    }
}
