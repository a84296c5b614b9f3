import Dispatch
import StoreRelayNet
import StoreRelayCore

/// Google's push-token keys, kept current in the background (SPEC "Google Play real-time
/// developer notifications"): fetched at start from `google-certs-url`, refetched when the
/// answer's `Cache-Control: max-age` runs out (bounded to `minimumLifetime...maximumLifetime`),
/// retried with exponential backoff after a failure, and once more on demand when a push
/// names a key the set lacks — at most once per `onDemandInterval`, so a flood of made-up
/// `kid`s cannot make the gateway hammer Google.
///
/// The acknowledgement path only reads `current`; nothing here ever runs on it. A failed
/// fetch keeps the keys already held (a broken answer never replaces good keys).
public final class GoogleKeySetSource: Sendable {
    public struct Options: Sendable {
        public var url: HTTPURL
        /// Also trust this CA for the URL's HTTPS server (`google-certs-url ... ca-file`).
        public var caFile: String?
        public var minimumLifetime: Duration = .seconds(300)
        public var maximumLifetime: Duration = .seconds(86_400)
        /// When the answer names no max-age.
        public var defaultLifetime: Duration = .seconds(3_600)
        public var firstRetry: Duration = .seconds(1)
        public var maximumRetry: Duration = .seconds(300)
        public var onDemandInterval: Duration = .seconds(30)
        public var timeout: Duration = .seconds(30)

        public init(url: HTTPURL, caFile: String? = nil) {
            self.url = url
            self.caFile = caFile
        }
    }

    private struct State {
        var keys: JSONWebKeySet?
        var fetching = false
        var stopped = false
        /// Bumped by every (re)scheduling: a timer whose number is stale does nothing.
        var schedule: UInt64 = 0
        var failures = 0
        /// Monotonic nanoseconds of the last on-demand refresh; nil: none yet.
        var lastOnDemand: UInt64?
        var lastError: String?
    }

    public let options: Options
    private let http: HTTPClient
    private let logger: Logger
    private let queue = DispatchQueue(label: "storerelay.google-keys", target: .nonBlockingWork)
    private let state = Locked(State())

    public init(options: Options, logger: Logger) {
        self.options = options
        self.logger = logger
        var configuration = HTTPClientConfiguration()
        configuration.maxIdleConnectionsPerOrigin = 1
        configuration.maxResponseBodySize = 256 * 1024
        http = HTTPClient(configuration: configuration)
    }

    /// The keys in force; nil until the first fetch succeeds.
    public var current: JSONWebKeySet? { state.current.keys }

    /// Why the last fetch failed, if it did (nil after a success).
    public var lastError: String? { state.current.lastError }

    /// Starts the first fetch; later ones schedule themselves.
    public func start() {
        queue.async { [self] in fetch(reason: "start") }
    }

    /// A push named `kid`, which the set lacks: fetch again now, unless a fetch is under way
    /// or one was asked for less than `onDemandInterval` ago.
    public func refresh(forUnknownKey kid: String) {
        let now = MonotonicClock.nanoseconds()
        let interval = UInt64(options.onDemandInterval.wholeMilliseconds) * 1_000_000
        let go = state.withLock { state -> Bool in
            guard !state.stopped, !state.fetching else { return false }
            if let last = state.lastOnDemand, now - last < interval { return false }
            state.lastOnDemand = now
            return true
        }
        guard go else { return }
        logger.info("google keys refresh", [("reason", "unknown kid"), ("kid", String(kid.prefix(80)))])
        queue.async { [self] in fetch(reason: "unknown kid") }
    }

    /// Stops refreshing and closes the client; `current` keeps answering.
    public func stop() {
        state.withLock { state in
            state.stopped = true
            state.schedule &+= 1
        }
        http.shutdown()
    }

    private func fetch(reason: String) {
        let proceed = state.withLock { state -> Bool in
            guard !state.stopped, !state.fetching else { return false }
            state.fetching = true
            state.schedule &+= 1
            return true
        }
        guard proceed else { return }
        var headers = HTTPHeaders()
        headers.add(name: "Accept", value: "application/json")
        headers.add(name: "User-Agent", value: "StoreRelay")
        let request = HTTPClientRequest(method: "GET", url: options.url, headers: headers, extraCAFile: options.caFile)
        http.execute(request, timeout: options.timeout) { [self] result in
            queue.async { [self] in finish(result) }
        }
    }

    private func finish(_ result: Result<HTTPClientResponse, HTTPClientError>) {
        // Stopped while the fetch was out (shutdown, reload): nothing to keep or report.
        let stopped = state.withLock { state in
            if state.stopped { state.fetching = false }
            return state.stopped
        }
        guard !stopped else { return }
        let outcome: Result<(JSONWebKeySet, Duration), GooglePlayError> = switch result {
        case .failure(let error): .failure(GooglePlayError("\(error)"))
        case .success(let response) where response.status != 200:
            .failure(GooglePlayError("HTTP \(response.status) from \(options.url)"))
        case .success(let response):
            Result { () throws(GooglePlayError) in
                (try JSONWebKeySet(json: response.body), lifetime(cacheControl: response.headers["Cache-Control"]))
            }
        }
        switch outcome {
        case .success(let (keys, lifetime)):
            let first = state.withLock { state in
                defer {
                    state.keys = keys
                    state.failures = 0
                    state.lastError = nil
                    state.fetching = false
                }
                return state.keys == nil
            }
            logger.info("google keys fetched", [
                ("url", options.url.description), ("keys", keys.keys.keys.sorted().joined(separator: " ")),
                ("refresh.in", "\(lifetime.wholeMilliseconds / 1000)s"), ("first", first ? "yes" : "no"),
            ])
            schedule(after: lifetime)
        case .failure(let error):
            let (failures, haveKeys) = state.withLock { state in
                state.fetching = false
                state.failures += 1
                state.lastError = error.reason
                return (state.failures, state.keys != nil)
            }
            let delay = retryDelay(afterFailures: failures)
            logger.warning("google keys fetch failed", [
                ("url", options.url.description), ("error", error.reason), ("attempt", failures),
                ("retry.in", "\(delay.wholeMilliseconds) ms"),
                ("keys", haveKeys ? "the previous keys stay in force" : "none yet: Play pushes answer 503"),
            ])
            schedule(after: delay)
        }
    }

    private func schedule(after delay: Duration) {
        let ticket = state.withLock { state -> UInt64? in
            guard !state.stopped else { return nil }
            state.schedule &+= 1
            return state.schedule
        }
        guard let ticket else { return }
        queue.asyncAfter(deadline: .now() + .milliseconds(Int(clamping: delay.wholeMilliseconds))) { [weak self] in
            guard let self, state.current.schedule == ticket else { return }
            fetch(reason: "schedule")
        }
    }

    /// Exponential from `firstRetry`, capped at `maximumRetry`.
    func retryDelay(afterFailures failures: Int) -> Duration {
        let first = max(1, options.firstRetry.wholeMilliseconds)
        let shift = min(max(failures - 1, 0), 20)
        return .milliseconds(min(first << shift, options.maximumRetry.wholeMilliseconds))
    }

    /// The answer's `max-age`, bounded; the default when it names none.
    func lifetime(cacheControl: String?) -> Duration {
        let seconds = cacheControl.flatMap(Self.maxAge)
        let lifetime = seconds.map { Duration.seconds($0) } ?? options.defaultLifetime
        return min(max(lifetime, options.minimumLifetime), options.maximumLifetime)
    }

    /// `max-age=N` from a `Cache-Control` value (RFC 9111 §5.2), if present and sane.
    static func maxAge(_ value: String) -> Int64? {
        for directive in value.split(separator: ",") {
            let trimmed = directive.trimmingCharacters(in: " \t")
            guard trimmed.lowercased().hasPrefix("max-age=") else { continue }
            let number = trimmed.dropFirst("max-age=".count).trimmingCharacters(in: "\"")
            guard !number.isEmpty, number.count <= 10, number.allSatisfy(\.isASCIIDigit) else { return nil }
            return Int64(number)
        }
        return nil
    }
}

extension StringProtocol {
    fileprivate func trimmingCharacters(in set: String) -> String {
        var slice = Substring(self)
        while let first = slice.first, set.contains(first) { slice = slice.dropFirst() }
        while let last = slice.last, set.contains(last) { slice = slice.dropLast() }
        return String(slice)
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
