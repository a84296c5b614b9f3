@testable import StoreRelayNet
import CStoreRelayShims
#if canImport(Glibc)
import Glibc
#endif
import Testing
import StoreRelayCore
import StoreRelayTestSupport

/// IPv6 clients are counted per /64 against `maxConnectionsPerAddress`. Loopback has one IPv6
/// address, so the accept function is wrapped to report each loopback source as an IPv6 peer:
/// 127.0.0.2 as a new address of 2001:db8:1:2::/64 each time, 127.0.0.3 as 2001:db8:1:3::1.
@Suite struct ServerAddressGroupTests {
    @Test func connectionsFromOneIPv6Slash64ShareOneLimit() throws {
        let held = Locked<[HTTPResponder]>([])
        let interfaceID = Locked<UInt8>(0)
        var configuration = HTTPServerConfiguration(address: "127.0.0.1:0")
        configuration.maxConnectionsPerAddress = 3
        let server = HTTPServer(configuration: configuration, logger: .disabled, handler: { request, responder in
            if request.path == "/held" { held.withLock { $0.append(responder) } } else { TestServer.echo(request, responder) }
        }, accept: { fd, address, length in
            let accepted = storerelay_accept4_nonblocking(fd, address, length)
            guard accepted >= 0 else { return accepted }
            let source = UnsafeRawPointer(address).loadUnaligned(as: sockaddr_in.self)
            let lastOctet = UInt8(UInt32(bigEndian: source.sin_addr.s_addr) & 0xFF)
            guard lastOctet == 2 || lastOctet == 3 else { return accepted }
            var peer = sockaddr_in6()
            peer.sin6_family = sa_family_t(AF_INET6)
            peer.sin6_port = source.sin_port
            let suffix: UInt8 = lastOctet == 2 ? interfaceID.withLock { id -> UInt8 in id += 1; return id } : 1
            inet_pton(AF_INET6, "2001:db8:1:\(lastOctet)::\(suffix)", &peer.sin6_addr)
            UnsafeMutableRawPointer(address).storeBytes(of: peer, as: sockaddr_in6.self)
            length.pointee = socklen_t(MemoryLayout<sockaddr_in6>.size)
            return accepted
        })
        let port = try server.start()
        defer {
            for responder in held.current { responder.respond(HTTPResponse(status: 200, contentType: "text/plain", body: "")) }
            server.shutdown()
        }
        // Three addresses of one /64, each with a request being answered: the /64's limit.
        let busy = try (0..<3).map { _ in try RawHTTPClient(port: port, source: "127.0.0.2") }
        for client in busy { try client.send(RawHTTPClient.request("GET", "/held")) }
        #expect(waitUntil(timeout: 5) { held.current.count == 3 })
        // A fourth address of the same /64 is refused...
        let fourth = try RawHTTPClient(port: port, source: "127.0.0.2")
        #expect(fourth.waitForClose(within: 3), "a fourth address of a full /64 was let in")
        #expect(interfaceID.current == 4)
        // ...and the next /64 is another client.
        let neighbour = try RawHTTPClient(port: port, source: "127.0.0.3")
        try neighbour.send(RawHTTPClient.request("GET", "/neighbour"))
        let response = try neighbour.readResponse()
        #expect(response.bodyText == "GET /neighbour ")
    }
}
