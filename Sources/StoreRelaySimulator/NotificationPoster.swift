import StoreRelayNet

/// Posts one notification body the way Apple does (`POST`, `Content-Type: application/json`)
/// and returns the answer, through the gateway's own HTTP client (the one transport and codec
/// every socket uses), so `simulate` speaks `https://` as well as `http://`.
///
/// `post` answers through its completion, on the client's queue; `storerelay simulate`, a
/// one-shot command, waits for it at its top level.
public struct NotificationPoster: Sendable {
    /// Bounds everything: resolving, connecting, sending and reading the answer.
    public var timeout: Duration
    /// The most of an answer that is read; a gateway's answers are a few hundred bytes.
    public var maxAnswerBytes = 1 << 20

    public init(timeout: Duration = .seconds(30)) {
        self.timeout = timeout
    }

    /// The URL `--url` names: `http://` or `https://`, host, optional port and path.
    public static func target(_ url: String) throws(SimulatorError) -> HTTPURL {
        do {
            return try HTTPURL.parse(url)
        } catch {
            throw SimulatorError(.invalidOption, "--url must look like http://host:port/path: \(error.description)")
        }
    }

    /// Posts `body` to `url`, with `headers` besides the usual ones (a Google Play push's
    /// `Authorization`); `completion` gets the answer, or why there is none.
    public func post(
        _ body: String, to url: HTTPURL, headers extra: [(String, String)] = [],
        completion: @escaping @Sendable (Result<HTTPAnswer, SimulatorError>) -> Void
    ) {
        var configuration = HTTPClientConfiguration()
        configuration.connectTimeout = timeout
        configuration.maxResponseBodySize = maxAnswerBytes
        let client = HTTPClient(configuration: configuration)
        var headers: HTTPHeaders = ["User-Agent": "StoreRelay-Simulator", "Content-Type": "application/json", "Connection": "close"]
        for (name, value) in extra { headers.add(name: name, value: value) }
        let request = HTTPClientRequest(method: "POST", url: url, headers: headers, body: Array(body.utf8))
        client.execute(request, timeout: timeout) { result in
            // One request per client: done with it once answered.
            client.shutdown()
            switch result {
            case .success(let response):
                completion(.success(HTTPAnswer(status: response.status, reason: response.reason,
                                               body: String(decoding: response.body, as: UTF8.self))))
            case .failure(let error):
                completion(.failure(SimulatorError(.delivery, "cannot post the notification to \(url.hostHeader): \(error.message)")))
            }
        }
    }
}
