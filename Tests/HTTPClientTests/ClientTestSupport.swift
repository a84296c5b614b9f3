import Foundation
import StoreRelayNet
import StoreRelayCore

/// `execute` as an async call, for tests.
func fetch(
    _ client: HTTPClient, _ request: HTTPClientRequest, timeout: Duration = .seconds(10)
) async -> Result<HTTPClientResponse, HTTPClientError> {
    await withCheckedContinuation { continuation in
        client.execute(request, timeout: timeout) { continuation.resume(returning: $0) }
    }
}

func fetch(_ client: HTTPClient, _ url: String, timeout: Duration = .seconds(10)) async throws -> Result<HTTPClientResponse, HTTPClientError> {
    await fetch(client, try HTTPClientRequest(url: url), timeout: timeout)
}

extension Result where Success == HTTPClientResponse, Failure == HTTPClientError {
    var response: HTTPClientResponse? { try? get() }
    var error: HTTPClientError? {
        if case .failure(let error) = self { return error }
        return nil
    }
    var bodyText: String? { response.map { String(decoding: $0.body, as: UTF8.self) } }
}

/// Polls `condition` until it holds or `deadline` passes; returns whether it held.
func eventually(within deadline: Duration = .seconds(10), _ condition: () -> Bool) async -> Bool {
    let end = ContinuousClock.now + deadline
    while ContinuousClock.now < end {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return condition()
}

/// A client with test-friendly defaults.
func makeClient(_ configure: (inout HTTPClientConfiguration) -> Void = { _ in }) -> HTTPClient {
    var configuration = HTTPClientConfiguration()
    configuration.connectTimeout = .seconds(5)
    configure(&configuration)
    return HTTPClient(configuration: configuration)
}

/// A loopback port with nothing listening: bound, then closed.
func closedPort() -> UInt16 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
        }
    }
    return UInt16(bigEndian: address.sin_port)
}

/// Serves every request on the connection with `respond` until the client closes.
func serveEach(_ respond: @escaping @Sendable (TestRequest) -> String) -> @Sendable (TestConnection) throws -> Void {
    { connection in
        while let request = connection.readRequest() { connection.write(respond(request)) }
    }
}

func ok(_ body: String) -> String {
    "HTTP/1.1 200 OK\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
}
