import StoreRelayNet

/// Posts one notification body the way Apple does (`POST`, `Content-Type: application/json`)
/// and returns the answer, through the gateway's own HTTP client (the one transport and codec
/// every socket uses), so `simulate` speaks `https://` as well as `http://`.
///
/// `post` blocks its caller until the answer: `storerelay simulate` is a one-shot command.
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

    public func post(_ body: String, to url: HTTPURL) throws(SimulatorError) -> HTTPAnswer {
        var configuration = HTTPClientConfiguration()
        configuration.connectTimeout = timeout
        configuration.maxResponseBodySize = maxAnswerBytes
        let client = HTTPClient(configuration: configuration)
        defer { client.shutdown() }
        let request = HTTPClientRequest(
            method: "POST", url: url,
            headers: ["User-Agent": "StoreRelay-Simulator", "Content-Type": "application/json", "Connection": "close"],
            body: Array(body.utf8))
        switch client.executeAndWait(request, timeout: timeout) {
        case .success(let response):
            return HTTPAnswer(status: response.status, reason: response.reason, body: String(decoding: response.body, as: UTF8.self))
        case .failure(let error):
            throw SimulatorError(.delivery, "cannot post the notification to \(url.hostHeader): \(error.message)")
        }
    }
}
