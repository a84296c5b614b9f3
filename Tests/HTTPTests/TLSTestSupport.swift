import StoreRelayNet
import StoreRelayCore
import StoreRelayTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A TLS server on 127.0.0.1 port 0 presenting the test CA's `localhost` identity, logging
/// at debug into memory so tests can see why a handshake failed.
final class TLSTestServer: Sendable {
    let server: HTTPServer
    let port: Int
    let log = MemorySink()
    let caFile: String

    init(_ configure: (inout HTTPServerConfiguration) -> Void = { _ in }, handler: @escaping HTTPHandler = TestServer.echo) throws {
        let certificates = try TLSTestCertificates.shared()
        caFile = certificates.caFile
        var configuration = HTTPServerConfiguration(address: "127.0.0.1:0")
        configuration.tls = try HTTPServerTLS(
            certificateChainFile: certificates.localhost.certificateFile, privateKeyFile: certificates.localhost.privateKeyFile)
        configure(&configuration)
        server = HTTPServer(configuration: configuration, logger: Logger(label: "test", level: .debug, sink: log), handler: handler)
        port = try server.start()
    }

    func client(timeout: Double = 5) throws -> TLSTestClient {
        try TLSTestClient(port: port, caFile: caFile, timeout: timeout)
    }

    /// Log lines whose message is `message`.
    func logged(_ message: String) -> [String] {
        log.lines.filter { $0.contains("\"message\":\"\(message)\"") }
    }

    @discardableResult
    func stop() -> Bool {
        let done = Locked(false)
        server.shutdown { done.withLock { $0 = true } }
        return waitUntil(timeout: 15) { done.current }
    }
}

/// A blocking TLS client for tests: `RawHTTPClient`'s socket (timeouts included) carrying a
/// The TLS client engine (StoreRelayNet/TLS) that verifies the server against the test CA.
final class TLSTestClient {
    let socket: RawHTTPClient
    let engine: TLSConnection
    private var plaintext: [UInt8] = []

    init(port: Int, caFile: String, timeout: Double = 5) throws {
        socket = try RawHTTPClient(port: port, timeout: timeout)
        engine = try TLSConnection(clientContext: TLSContext(clientTrustingExtraCAFile: caFile), serverName: "localhost")
        while try !engine.handshake() {
            try sendCiphertext()
            try receive()
        }
        try sendCiphertext()
    }

    func send(_ text: String) throws {
        try engine.writePlaintext(Array(text.utf8))
        try sendCiphertext()
    }

    /// Reads one response with a `Content-Length` body.
    func readResponse() throws -> TLSTestResponse {
        while true {
            let status = try engine.readPlaintext(into: &plaintext)
            if let response = try takeResponse() { return response }
            if status == .closed { throw RawHTTPClientError.closed(partial: plaintext) }
            try receive()
        }
    }

    private func takeResponse() throws -> TLSTestResponse? {
        guard let headEnd = plaintext.indices.dropLast(3).first(where: { plaintext[$0..<($0 + 4)].elementsEqual([13, 10, 13, 10]) })
        else { return nil }
        let lines = String(decoding: plaintext[..<headEnd], as: UTF8.self).components(separatedBy: "\r\n")
        let parts = lines[0].split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, let code = Int(parts[1]) else { throw RawHTTPClientError.malformedResponse(lines[0]) }
        var response = TLSTestResponse(status: code)
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { throw RawHTTPClientError.malformedResponse(line) }
            response.headers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: " ")))
        }
        let length = response.header("Content-Length").flatMap { Int($0) } ?? 0
        let bodyStart = headEnd + 4
        guard plaintext.count >= bodyStart + length else { return nil }
        response.body = Array(plaintext[bodyStart..<(bodyStart + length)])
        plaintext.removeFirst(bodyStart + length)
        return response
    }

    private func sendCiphertext() throws {
        let bytes = engine.takeCiphertext()
        if !bytes.isEmpty { try socket.send(bytes) }
    }

    /// One blocking `recv` of ciphertext, bounded by the socket timeout.
    private func receive() throws {
        var scratch = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = recv(socket.fileDescriptor, &scratch, scratch.count, 0)
            if count > 0 { return engine.receiveCiphertext(scratch[..<count]) }
            if count == 0 || errno == ECONNRESET { throw RawHTTPClientError.closed(partial: plaintext) }
            if errno == EINTR { continue }
            throw errno == EAGAIN ? RawHTTPClientError.timedOut : RawHTTPClientError.ioFailed(errno: errno)
        }
    }
}

/// A response read by `TLSTestClient`.
struct TLSTestResponse {
    var status: Int
    var headers: [(name: String, value: String)] = []
    var body: [UInt8] = []

    func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    var bodyText: String { String(decoding: body, as: UTF8.self) }
}

extension Substring {
    fileprivate func trimmingCharacters(in set: Character) -> String {
        String(drop { $0 == set }.reversed().drop { $0 == set }.reversed())
    }
}
