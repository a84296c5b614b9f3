/// What `ServerWatch` knows of the server, fed by its probes with the monotonic time (ns)
/// each happened: pure, so the rules are tested without a server or a clock.
///
/// The server is *silent* when the watch is not connected, or when a probe has been
/// unanswered for `silenceLimit`; it is *not durable* from a durability check that refused
/// it until one that passes. A verdict is only as good as it is recent: one older than
/// `verdictLimit` (the watch could not connect, its `CONFIG GET` failed or timed out), or
/// none yet, vouches for nothing, and nothing is acknowledged on it.
struct ServerWatchState: Sendable {
    /// A change worth a log line.
    enum Change: Sendable, Equatable {
        case silent
        case answering
        case notDurable(String)
        case durable
    }

    let silenceLimit: UInt64
    /// How old the last durability verdict may be and still vouch for the server.
    let verdictLimit: UInt64
    private(set) var isConnected = false
    private(set) var durabilityRefusal: String?
    /// When the last durability verdict came (a check's, or a connection's that passed its
    /// checks); nil before the first.
    private(set) var verdictAt: UInt64?
    /// The probe in flight: its number and when it was sent.
    private var outstanding: (number: UInt64, sentAt: UInt64)?
    private var probesSent: UInt64 = 0
    /// Whether the last silence reported was `.silent`, so each change is logged once.
    private var reportedSilent = true
    /// Until the server first answers, its silence is the start's, not news.
    private var hasAnswered = false

    init(silenceLimit: UInt64, verdictLimit: UInt64 = .max) {
        self.silenceLimit = silenceLimit
        self.verdictLimit = verdictLimit
    }

    mutating func connected() {
        isConnected = true
        outstanding = nil
    }

    /// The connection is gone: so is any probe in flight on it.
    mutating func disconnected() {
        isConnected = false
        outstanding = nil
    }

    /// The number of a probe to send now, or nil while one is in flight or there is no
    /// connection (one probe at a time: silence is measured from the oldest unanswered one).
    mutating func probeToSend(at now: UInt64) -> UInt64? {
        guard isConnected, outstanding == nil else { return nil }
        probesSent += 1
        outstanding = (probesSent, now)
        return probesSent
    }

    /// Probe `number` was answered (or failed, with its connection): it is no longer in flight.
    /// A late answer to an older probe changes nothing.
    mutating func probeFinished(_ number: UInt64) {
        if outstanding?.number == number { outstanding = nil }
    }

    func isSilent(at now: UInt64) -> Bool {
        guard isConnected else { return true }
        guard let outstanding else { return false }
        return now >= outstanding.sentAt && now - outstanding.sentAt >= silenceLimit
    }

    /// `.silent` or `.answering` when that changed since the last report.
    mutating func silenceChange(at now: UInt64) -> Change? {
        let silent = isSilent(at: now)
        guard silent != reportedSilent else { return nil }
        reportedSilent = silent
        if !silent && !hasAnswered {
            hasAnswered = true
            return nil
        }
        return silent ? .silent : .answering
    }

    /// A durability check's verdict at `now` (nil: durable); the change, when it is one.
    mutating func durabilityChecked(_ refusal: String?, at now: UInt64) -> Change? {
        verdictAt = now
        defer { durabilityRefusal = refusal }
        switch (durabilityRefusal, refusal) {
        case (nil, nil): return nil
        case (_, let refusal?): return refusal == durabilityRefusal ? nil : .notDurable(refusal)
        case (.some, nil): return .durable
        }
    }

    /// Why nothing may be acknowledged at `now` as far as durability goes: the last verdict's
    /// refusal, or no verdict recent enough to vouch for the server; nil when one does.
    func acceptanceRefusal(at now: UInt64) -> String? {
        if let durabilityRefusal { return durabilityRefusal }
        guard let verdictAt else { return "the server's durability settings have not been checked yet" }
        guard now >= verdictAt, now - verdictAt > verdictLimit else { return nil }
        return "the server's durability settings have not been checked for \((now - verdictAt) / 1_000_000_000) s"
    }
}
