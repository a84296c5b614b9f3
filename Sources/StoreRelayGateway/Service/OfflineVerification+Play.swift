import Dispatch
import StoreRelayGooglePlay
import StoreRelayConfig
import StoreRelayNet
import StoreRelayCore

/// `storerelay verify` for a saved Google Play push: its body and its `Authorization` header,
/// checked exactly as a `play` path would (`PlayProcessor`), against a key set given as a JWKS
/// document (a file, or fetched from `google-certs-url` by `fetchGoogleKeys`).
extension OfflineVerification {
    /// A saved push: the body and the bearer header it came with.
    public struct SavedPush: Sendable, Equatable {
        public var authorization: String?
        public var body: [UInt8]

        public init(authorization: String?, body: [UInt8]) {
            self.authorization = authorization
            self.body = body
        }

        /// Reads a push saved as an HTTP request: an optional request line (`POST /play HTTP/1.1`),
        /// header lines, an empty line, then the body; CRLF or LF line ends. Nil when `bytes`
        /// does not start like one (a bare JSON body, say).
        public static func parseHTTP(_ bytes: [UInt8]) -> SavedPush? {
            guard let first = bytes.first, first != UInt8(ascii: "{"), first != UInt8(ascii: "["), first > 0x20 else { return nil }
            var lines: [String] = []
            var index = 0
            var bodyStart: Int?
            while index < bytes.count {
                var end = index
                while end < bytes.count, bytes[end] != 0x0A { end += 1 }
                var line = bytes[index..<end]
                if line.last == 0x0D { line = line.dropLast() }
                index = end + 1
                if line.isEmpty {
                    bodyStart = index
                    break
                }
                lines.append(String(decoding: line, as: UTF8.self))
            }
            guard let bodyStart else { return nil }
            var authorization: String?
            for (number, line) in lines.enumerated() {
                if number == 0, line.hasPrefix("POST ") { continue }
                guard let colon = line.firstIndex(of: ":") else { return nil }
                let name = line[..<colon]
                guard !name.isEmpty, !name.contains(" ") else { return nil }
                if name.lowercased() == "authorization" {
                    authorization = String(line[line.index(after: colon)...].drop { $0 == " " || $0 == "\t" })
                }
            }
            return SavedPush(authorization: authorization, body: Array(bytes[min(bodyStart, bytes.count)...]))
        }
    }

    /// Whether `body` looks like a Pub/Sub push (a JSON object with a `message` object), so
    /// `verify` can say that it needs its Authorization header rather than "not Apple's".
    public static func looksLikePlayPush(_ body: [UInt8]) -> Bool {
        (try? JSONValue.parse(body, maxDepth: 16))?["message"]?.objectValue != nil
    }

    /// Verifies a saved push as a `play` path would at `clock`'s time. A push the gateway
    /// would quarantine is a verdict with its reason; a token it would refuse, or a key the
    /// document lacks, is a rejection (`signature` or `unavailable`).
    public static func verifyPlay(
        _ push: SavedPush, keySetDocument: [UInt8], configuration: GatewayConfiguration, clock: any TimeSource = WallClock()
    ) throws -> Verdict {
        guard !configuration.playApps.isEmpty else {
            throw Rejection(code: "configuration", message: "The configuration declares no play block; a push is verified against one.")
        }
        let keys: JSONWebKeySet
        do {
            keys = try JSONWebKeySet(json: keySetDocument)
        } catch {
            throw Rejection(code: "keys", message: "The key set is not usable: \(error.reason)")
        }
        let processor = PlayProcessor(configuration)
        do {
            let stored = try processor.process(authorization: push.authorization, body: push.body, keys: keys, receivedAt: clock.now())
            var reason: String?
            if case .quarantine(let why) = stored.disposition { reason = why }
            return Verdict(eventJSON: String(decoding: stored.event.jsonBytes(), as: UTF8.self), quarantineReason: reason)
        } catch {
            switch error {
            case .unauthorized(let message): throw Rejection(code: "signature", message: message)
            case .unknownKey(let kid): throw Rejection(code: "unavailable", message: "The token's key '\(kid.prefix(80))' is not in the key set.")
            case .noKeys: throw Rejection(code: "unavailable", message: error.rejection.message)
            }
        }
    }

    /// Fetches the JWKS document from `google-certs-url` (or Google's), once; `completion`
    /// runs on a queue of the client's.
    public static func fetchGoogleKeys(
        configuration: GatewayConfiguration, timeout: Duration = .seconds(20),
        completion: @escaping @Sendable (Result<[UInt8], Rejection>) -> Void
    ) {
        var forced = configuration
        if !forced.hasPlayPath { forced.paths.append(NotificationPath(path: "/verify", kind: .googlePlay)) }
        guard let options = PlayIntake.keyOptions(forced) else {
            return completion(.failure(Rejection(code: "keys", message: "No URL to fetch Google's keys from.")))
        }
        let client = HTTPClient()
        let request = HTTPClientRequest(method: "GET", url: options.url, headers: ["Accept": "application/json"], extraCAFile: options.caFile)
        client.execute(request, timeout: timeout) { result in
            defer { client.shutdown() }
            switch result {
            case .success(let response) where response.status == 200:
                completion(.success(response.body))
            case .success(let response):
                completion(.failure(Rejection(code: "keys", message: "HTTP \(response.status) from \(options.url)")))
            case .failure(let error):
                completion(.failure(Rejection(code: "keys", message: "Cannot fetch \(options.url): \(error)")))
            }
        }
    }
}
