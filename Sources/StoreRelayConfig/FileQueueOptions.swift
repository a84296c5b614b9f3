/// How a file-queue destination writes (`destination NAME file DIR { ... }`).
public struct FileQueueOptions: Sendable, Hashable {
    /// Compression of closed segments.
    public enum Compression: String, Sendable, Hashable {
        case none, gzip
    }

    /// The queue directory, as written (relative paths are relative to the working directory).
    public var directory: String
    /// A segment is closed once it reaches this many bytes; default 64MiB.
    public var rotateSize: Int = 64 << 20
    /// A segment is closed once it has been open this long; default 1h.
    public var rotateInterval: Duration = .seconds(3600)
    /// Compression of closed segments; default none.
    public var compression: Compression = .none

    public init(directory: String) { self.directory = directory }
}
