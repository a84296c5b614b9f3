import Foundation
@testable import StoreRelayGateway
import StoreRelayNet
import StoreRelayCore
import StoreRelayTestSupport

/// A real `AdminServer` on loopback port 0 over a `FakeBackend`, and ways to call it with
/// real clients: curl (with headers and an optional cookie jar) and Python's http.client
/// (which sends a path exactly as given, `../` included).
final class AdminHarness {
    let backend: FakeBackend
    let server: AdminServer
    let token: String
    let port: Int
    let metricsText = "# TYPE storerelay_up gauge\nstorerelay_up 1\n"

    var baseURL: String { "http://127.0.0.1:\(port)" }

    init(token: String = "test-admin-token-0123456789", clock: any TimeSource = WallClock()) throws {
        backend = try FakeBackend()
        self.token = token
        let text = metricsText
        server = AdminServer(backend: backend, token: token, configuration: HTTPServerConfiguration(address: "127.0.0.1:0"),
                             metrics: { text }, clock: clock)
        port = try server.start()
    }

    deinit {
        let done = DispatchSemaphore(value: 0)
        server.shutdown { done.signal() }
        done.wait()
        try? FileManager.default.removeItem(atPath: backend.directory)
    }

    var bearer: String { "Authorization: Bearer \(token)" }

    /// A response as curl saw it: status, headers (lower-cased names) and body.
    struct Response {
        var status: Int
        var headers: [String: String]
        var body: String
        var json: JSONValue? { try? JSONValue.parse(body) }
    }

    /// Runs curl against `path` and parses `-i` output. `extra` are further curl arguments.
    func curl(_ path: String, method: String = "GET", headers: [String] = [], body: String? = nil,
              extra: [String] = []) throws -> Response {
        var arguments = ["-sS", "-i", "--path-as-is", "--max-time", "20", "-X", method]
        for header in headers { arguments += ["-H", header] }
        if let body { arguments += ["--data-binary", body] }
        let result = try CommandRunner.run("curl", arguments + extra + [baseURL + path])
        guard result.status == 0 else { throw HarnessError("curl failed: \(result.stderr)") }
        return try Self.parse(result.stdout)
    }

    static func parse(_ output: String) throws -> Response {
        guard let split = output.range(of: "\r\n\r\n") else { throw HarnessError("no header block in: \(output)") }
        let lines = output[..<split.lowerBound].components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else { throw HarnessError("bad status line \(lines[0])") }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            headers[name] = headers[name].map { $0 + "\n" + value } ?? value
        }
        return Response(status: status, headers: headers, body: String(output[split.upperBound...]))
    }

    /// Sends `method path` with Python's http.client, which does not normalize the path.
    func python(_ method: String, _ path: String, authorized: Bool = true) throws -> (status: Int, body: String) {
        let script = """
            import http.client, sys
            c = http.client.HTTPConnection("127.0.0.1", \(port), timeout=20)
            headers = {"Authorization": "Bearer " + sys.argv[3]} if sys.argv[3] else {}
            c.request(sys.argv[1], sys.argv[2], headers=headers)
            r = c.getresponse()
            sys.stdout.write(str(r.status) + "\\n" + r.read().decode())
            """
        let result = try CommandRunner.run("python3", ["-c", script, method, path, authorized ? token : ""])
        guard result.status == 0, let newline = result.stdout.firstIndex(of: "\n"),
              let status = Int(result.stdout[..<newline]) else { throw HarnessError("python failed: \(result.stderr)") }
        return (status, String(result.stdout[result.stdout.index(after: newline)...]))
    }
}

struct HarnessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
