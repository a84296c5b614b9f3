
/// What an `OutboundConnection` tells its protocol client, on the connection's queue, in this
/// order: `resolved`, `established`, then any number of `received`, and at most one of
/// `inputEnded` or `failed`; `deadline` whenever the deadline the client set passes. Nothing
/// follows `failed`, nor the client's own `close()`.
public enum OutboundEvent {
    /// The name resolved; dialing starts now (a connect deadline may start here too).
    case resolved
    /// Connected, and TLS established when asked for: buffered writes go out from now on.
    case established
    /// Bytes arrived. A slice of the connection's read buffer: consume it before returning
    /// (a copy made of it stays valid).
    case received(ArraySlice<UInt8>)
    /// The peer ended its output (FIN, or TLS close_notify). Reading stops; the client
    /// decides whether a response ended well or was cut short, and closes.
    case inputEnded
    /// The deadline set with `setDeadline` passed.
    case deadline
    /// The connection failed and is closed already.
    case failed(OutboundError)
}
