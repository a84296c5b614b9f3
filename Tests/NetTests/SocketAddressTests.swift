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
