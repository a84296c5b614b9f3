/// Seams for tests that must catch the gateway at the moment a crash could land. A running
/// `storerelay serve` has none: only code that assembles a `Gateway` itself can set them.
public struct GatewayTestHooks: Sendable {
    /// A pause between writing a new delivery checkpoint and renaming it into place, so a test
    /// can copy the data directory as a `kill -9` at that moment would leave it.
    public var checkpointPause: Duration?
    /// How long dead letters and tampered records are counted before one operational event
    /// says how many (a minute in production).
    public var operationalBatchWindow: Duration?
    /// Replaces `intake-silence`, which routes.conf keeps at a minute or more.
    public var intakeSilence: Duration?
    /// How often the intake-silence and disk-space watches check (a minute in production).
    public var operationalCheckInterval: Duration?
    /// How long a cluster instance's claim on a Google Play push in the server's inbox lasts
    /// without renewal (two minutes in production): another instance takes it over then.
    public var playInboxClaim: Duration?

    public init(checkpointPause: Duration? = nil, operationalBatchWindow: Duration? = nil, intakeSilence: Duration? = nil,
                operationalCheckInterval: Duration? = nil, playInboxClaim: Duration? = nil) {
        self.checkpointPause = checkpointPause
        self.operationalBatchWindow = operationalBatchWindow
        self.intakeSilence = intakeSilence
        self.operationalCheckInterval = operationalCheckInterval
        self.playInboxClaim = playInboxClaim
    }
}
