import Dispatch
import StoreRelayGateway
import StoreRelayConfig
import StoreRelayNet
import StoreRelayCore

/// A failed `dlq`, `reconcile` or `probe` command: one sentence for stderr and the exit code.
struct AdminCommandFailure: Error {
    let message: String
    let exitCode: Int32

    static func failure(_ message: String) -> AdminCommandFailure { AdminCommandFailure(message: message, exitCode: ExitCode.failure) }
    static func usage(_ message: String) -> AdminCommandFailure { AdminCommandFailure(message: message, exitCode: ExitCode.usage) }
}

/// Talks to a running gateway's admin listener, one blocking request at a time: the CLI's
/// main thread waits (`Blocking`) while `HTTPClient` does the I/O on its own queues.
struct AdminClient {
    struct Answer {
        var status: Int
        var json: JSONValue?

        /// The server's `message` member, or a generic sentence.
        var message: String { json?["message"]?.stringValue ?? "the admin listener answered HTTP \(status)" }
    }

    /// `http://host:port`, no trailing slash.
    let baseURL: String
    let token: String
    private let client: HTTPClient

    init(baseURL: String, token: String) {
        self.baseURL = baseURL
        self.token = token
        var configuration = HTTPClientConfiguration()
        configuration.connectTimeout = .seconds(5)
        // A page of 500 dead letters, each carrying its event and Apple's body, exceeds the
        // client's 1 MiB default.
        configuration.maxResponseBodySize = 512 * 1024 * 1024
        client = HTTPClient(configuration: configuration)
    }

    func shutdown() { client.shutdown() }

    /// Sends one request; a 401 and an unreachable server become failures here, every other
    /// status is the caller's to judge.
    func send(
        _ method: String, _ path: String, json body: JSONValue? = nil, timeout: Duration = .seconds(120)
    ) throws(AdminCommandFailure) -> Answer {
        var headers: HTTPHeaders = ["Authorization": "Bearer \(token)", "Accept": "application/json"]
        if body != nil { headers.add(name: "Content-Type", value: "application/json") }
        let request: HTTPClientRequest
        do {
            request = try HTTPClientRequest(method: method, url: baseURL + path, headers: headers, body: body?.serializedBytes() ?? [])
        } catch {
            throw .usage("\(baseURL) is not a usable admin URL (\(error.message))")
        }
        switch Blocking.wait(for: { client.execute(request, timeout: timeout, completion: $0) }) {
        case .success(let response):
            let json = response.body.isEmpty ? nil : try? JSONValue.parse(response.body)
            if response.status == 401 {
                throw .failure("the admin listener at \(baseURL) rejected the admin token (HTTP 401); check --token or the configuration's admin-token")
            }
            return Answer(status: response.status, json: json)
        case .failure(let error):
            throw .failure("the admin listener at \(baseURL) is not reachable (\(error.message)); is `storerelay serve` running?")
        }
    }

    /// Every dead letter matching the filters, newest first, following cursors, at most `limit`
    /// (nil: all); also whether more remained.
    func listAll(_ filters: DlqAction.Filters, limit: Int?) throws(AdminCommandFailure) -> (items: [JSONValue], more: Bool) {
        var items: [JSONValue] = []
        var cursor: String?
        repeat {
            let pageSize = min(500, limit.map { $0 - items.count } ?? 500)
            var query: [(String, String)] = [("limit", String(pageSize))]
            if let destination = filters.destination { query.append(("destination", destination)) }
            if let reason = filters.reason { query.append(("reason", reason)) }
            query += filters.search
            if let cursor { query.append(("cursor", cursor)) }
            let answer = try send("GET", "/api/dead-letters?" + FormEncoding.encode(query))
            guard answer.status == 200, let page = answer.json?["items"]?.arrayValue else {
                throw .failure(answer.status == 400 ? answer.message : "listing dead letters failed: \(answer.message)")
            }
            items += page
            cursor = answer.json?["nextCursor"]?.stringValue
            if let limit, items.count >= limit { return (items, cursor != nil) }
        } while cursor != nil
        return (items, false)
    }

    /// `/api/dead-letters/<id>` with the id percent-encoded, so no argument can reshape the path.
    static func letterPath(_ id: String, suffix: String = "") -> String {
        "/api/dead-letters/" + FormEncoding.percentEncode(id) + suffix
    }
}

extension AdminClient {
    /// The admin URL and token from the options, else from the configuration: its `admin`
    /// address and `admin-token`, else `DATA/admin.token` (present on the gateway's machine).
    static func connect(_ parsed: ParsedArguments) throws(AdminCommandFailure) -> AdminClient {
        var url = parsed.option("admin").map(normalize)
        var token = parsed.option("token")
        if url == nil || token == nil {
            let configuration: GatewayConfiguration
            do {
                configuration = try ConfigurationLoader.load(option: parsed.option("config"))
            } catch {
                throw .failure(error.description)
            }
            if url == nil { url = baseURL(of: configuration.admin) }
            if token == nil {
                token = configuration.adminToken?.value ?? AdminToken.read(dataDirectory: configuration.dataDirectory)
            }
            guard token != nil else {
                throw .failure("no admin token: pass --token, set admin-token in the configuration, or run where \(AdminToken.path(dataDirectory: configuration.dataDirectory)) exists")
            }
        }
        guard let url, let token, !token.isEmpty else { throw .usage("--token must not be empty") }
        return AdminClient(baseURL: url, token: token)
    }

    /// `host:port` and `http://host:port/` both become `http://host:port`.
    static func normalize(_ text: String) -> String {
        var url = text.contains("://") ? text : "http://" + text
        while url.hasSuffix("/") { url.removeLast() }
        return url
    }

    /// A wildcard listen address is reached on loopback.
    static func baseURL(of address: ListenAddress) -> String {
        switch address.kind {
        case .ipv6: "http://[\(address.host == "::" ? "::1" : address.host)]:\(address.port)"
        default: "http://\(address.host == "0.0.0.0" ? "127.0.0.1" : address.host):\(address.port)"
        }
    }
}
