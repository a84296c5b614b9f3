import Dispatch
import StoreRelayNet
import StoreRelayCore
import StoreRelayTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A real server on 127.0.0.1 port 0 for one test, shut down with `stop()`.
final class TestServer: Sendable {
    let server: HTTPServer
    let port: Int

    init(_ configure: (inout HTTPServerConfiguration) -> Void = { _ in }, handler: @escaping HTTPHandler = TestServer.echo) throws {
        var configuration = HTTPServerConfiguration(address: "127.0.0.1:0")
        configure(&configuration)
        server = HTTPServer(configuration: configuration, handler: handler)
        port = try server.start()
    }

    func client(timeout: Double = 5, source: String? = nil) throws -> RawHTTPClient {
        try RawHTTPClient(port: port, timeout: timeout, source: source)
    }

    /// Shuts down and waits for the completion; true when it came.
    @discardableResult
    func stop() -> Bool {
        let done = Locked(false)
        server.shutdown { done.withLock { $0 = true } }
        return waitUntil(timeout: 15) { done.current }
    }

    /// Answers `METHOD path body` in the body, with the request's headers echoed as `X-Echo-<name>`.
    static let echo: HTTPHandler = { request, responder in
        responder.respond(HTTPResponse(
            status: 200, contentType: "text/plain",
            body: "\(request.method) \(request.target) " + String(decoding: request.body, as: UTF8.self)))
    }
}

/// Polls `condition` every few milliseconds until it holds or `timeout` seconds pass.
@discardableResult
func waitUntil(timeout: Double, _ condition: () -> Bool) -> Bool {
    let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(timeout * 1e9)
    while DispatchTime.now().uptimeNanoseconds < deadline {
        if condition() { return true }
        usleep(5_000)
    }
    return condition()
}

/// The `Threads:` line of /proc/self/status.
func processThreadCount() -> Int? {
    guard let file = fopen("/proc/self/status", "r") else { return nil }
    defer { fclose(file) }
    var line = [CChar](repeating: 0, count: 256)
    while fgets(&line, Int32(line.count), file) != nil {
        let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if text.hasPrefix("Threads:") {
            return Int(text.dropFirst("Threads:".count).filter { !$0.isWhitespace })
        }
    }
    return nil
}
