import StoreRelayConfig
import StoreRelayCore

/// What the dedupe window means for an old notification (docs/SPEC.md `dedupe-window`): one
/// signed longer ago than the window may have had its id forgotten, so a replay of it cannot
/// be told from a first delivery.
///
/// One rule, applied twice: acceptance quarantines such a notification, and a dead-letter
/// replay refuses it unless an operator forces it. Both say why in the same words.
public struct StalenessRule: Sendable, Equatable {
    /// How long notification ids are remembered (`dedupe-window`).
    public var window: Duration

    public init(window: Duration) {
        self.window = window
    }

    /// Why a notification signed at `signed` is stale at `now`, as the quarantine reason
    /// and a refused replay give it; nil when it is not, or has no date (V1, and the few old
    /// V2 payloads without `signedDate`).
    public func staleness(signed: Timestamp?, now: Timestamp) -> String? {
        guard let signed, signed.milliseconds < now.milliseconds - window.wholeMilliseconds else { return nil }
        return "stale: signed \(signed.iso8601), before the \(ConfigFormat.duration(window)) "
            + "dedupe-window, so a replay cannot be told from a first delivery"
    }
}
