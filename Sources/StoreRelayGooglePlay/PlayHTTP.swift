import StoreRelayCore
import StoreRelayNet

/// What the token endpoint and the Developer API calls share: URLs under a base, percent
/// encoding, and reading Google's answers into `PlayAPIError`s.
enum PlayHTTP {
    static var userAgent: String { "StoreRelay/\(StoreRelayVersion.current)" }

    /// `path` under `base`, whose own path (a proxy's prefix) is kept and whose query is not.
    static func url(_ base: HTTPURL, _ path: String) -> HTTPURL {
        var prefix = base.pathAndQuery.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0]
        while prefix.hasSuffix("/") { prefix = prefix.dropLast() }
        let origin = base.scheme.rawValue + "://" + base.hostHeader
        return HTTPURL(scheme: base.scheme, host: base.host, hostKind: base.hostKind, port: base.port,
                       pathAndQuery: prefix + path, absoluteString: origin + prefix + path)
    }

    /// Percent-encodes everything but RFC 3986's unreserved characters: a path segment or a
    /// form value can then hold anything (`/`, `?`, `%`, `+`, non-ASCII) without changing
    /// the request's meaning.
    static func percentEncoded(_ text: String) -> String {
        let digits = Array("0123456789ABCDEF")
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case 0x30...0x39, 0x41...0x5A, 0x61...0x7A, 0x2D, 0x2E, 0x5F, 0x7E: out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out.append("%")
                out.append(digits[Int(byte >> 4)])
                out.append(digits[Int(byte & 0x0F)])
            }
        }
        return out
    }

    /// An exchange's outcome: the JSON object of a 2xx no larger than `maxBytes`, or why not.
    /// `what` names the call in messages (never the purchase token: it is a credential).
    static func classify(
        _ result: Result<HTTPClientResponse, HTTPClientError>, what: String, maxBytes: Int
    ) -> Result<JSONValue, PlayAPIError> {
        let response: HTTPClientResponse
        switch result {
        case .success(let answer): response = answer
        case .failure(let error) where error.code == .responseTooLarge:
            return .failure(PlayAPIError(.malformedResponse, "\(what): the answer is larger than the client accepts (\(error.message))"))
        case .failure(let error) where error.code == .invalidRequest:
            return .failure(PlayAPIError(.configuration, "\(what): \(error.message)"))
        case .failure(let error):
            return .failure(PlayAPIError(.transport, "\(what): \(error)"))
        }
        guard response.body.count <= maxBytes else {
            return .failure(PlayAPIError(.malformedResponse, "\(what) answered \(response.body.count) bytes, more than the \(maxBytes) accepted",
                                         status: response.status))
        }
        let json = try? JSONValue.parse(response.body, maxDepth: 32)
        guard (200..<300).contains(response.status) else {
            return .failure(error(status: response.status, json: json, headers: response.headers, what: what))
        }
        guard let json, json.objectValue != nil else {
            return .failure(PlayAPIError(.malformedResponse, "\(what) answered \(response.status) without a JSON object", status: response.status))
        }
        return .success(json)
    }

    /// Google's error answer. The token endpoint writes OAuth2's
    /// `{"error":"invalid_grant","error_description":"..."}` (RFC 6749 §5.2); the API writes
    /// `{"error":{"code":404,"message":"...","status":"NOT_FOUND"}}`.
    static func error(status: Int, json: JSONValue?, headers: HTTPHeaders, what: String) -> PlayAPIError {
        var code: String?
        var detail: String?
        if let error = json?["error"] {
            if let text = error.stringValue {
                code = text
                detail = json?["error_description"]?.stringValue
            } else {
                code = error["status"]?.stringValue
                detail = error["message"]?.stringValue
            }
        }
        let described = "\(what) answered \(status)"
            + (code.map { " (\($0.prefix(60))" + (detail.map { ": \($0.prefix(200))" } ?? "") + ")" } ?? "")
        switch status {
        case 401:
            return PlayAPIError(.unauthorized, described, status: status, googleError: code)
        case 429:
            let seconds = headers["Retry-After"].flatMap { Int64($0.filter { $0 != " " && $0 != "\t" }) }
            return PlayAPIError(.rateLimited, described, status: status, googleError: code,
                                retryAfter: seconds.map { .seconds(max(0, $0)) })
        case 408, 500...599:
            return PlayAPIError(.server, described, status: status, googleError: code)
        default:
            return PlayAPIError(.rejected, described, status: status, googleError: code)
        }
    }
}
