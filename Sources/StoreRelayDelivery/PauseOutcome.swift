/// What a pause or resume of one destination did (`DeliveryService.setPaused`).
public enum PauseOutcome: Sendable, Equatable {
    /// Now paused (or resumed); `changed` is false when it already was.
    case done(changed: Bool)
    /// No destination has that name.
    case unknownDestination
    /// The change could not be stored durably (disk, cluster server): nothing changed.
    case failed(String)
}
