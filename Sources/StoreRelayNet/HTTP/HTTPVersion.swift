/// An HTTP/1.x protocol version. Only 1.0 and 1.1 are spoken; anything else is rejected by the
/// parser (RFC 9112 §2.3).
public struct HTTPVersion: Sendable, Hashable, CustomStringConvertible {
    public var major: Int
    public var minor: Int

    public init(major: Int, minor: Int) {
        self.major = major
        self.minor = minor
    }

    public static let http1_0 = HTTPVersion(major: 1, minor: 0)
    public static let http1_1 = HTTPVersion(major: 1, minor: 1)

    /// `HTTP/1.1`, as written on the wire.
    public var description: String { "HTTP/\(major).\(minor)" }
}
