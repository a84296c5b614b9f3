/// Seams for tests that must catch the gateway at the moment a crash could land. A running
/// `storerelay serve` has none: only code that assembles a `Gateway` itself can set them.
public struct GatewayTestHooks: Sendable {
    /// A pause between writing a new delivery checkpoint and renaming it into place, so a test
    /// can copy the data directory as a `kill -9` at that moment would leave it.
    public var checkpointPause: Duration?

    public init(checkpointPause: Duration? = nil) {
        self.checkpointPause = checkpointPause
    }
}
