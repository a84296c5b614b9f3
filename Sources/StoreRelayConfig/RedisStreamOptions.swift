public import StoreRelayNet

/// How a Redis Streams destination is delivered to (`destination NAME redis-stream URL { ... }`):
/// one `XADD` per event, delivered once the server answers with the entry's id.
public struct RedisStreamOptions: Sendable, Hashable {
    /// The server: `redis://` or `rediss://`, with the password and database as the URL says.
    public var url: RedisURL
    /// The stream's key, placeholders filled per event; default `appstore:events`.
    public var stream: NameTemplate = Self.defaultStream
    /// `MAXLEN ~ N` on every `XADD`, so the stream trims itself; nil keeps every entry.
    public var maxLength: Int?
    /// `rediss://`: a PEM file of CAs trusted besides the system store, as written.
    public var caFile: String?
    /// Body format, timeout, concurrency and retry limits, as for every kind.
    public var delivery = DeliveryOptions()

    public init(url: RedisURL) { self.url = url }

    public static let defaultStream = try! NameTemplate(parsing: "appstore:events")
}
