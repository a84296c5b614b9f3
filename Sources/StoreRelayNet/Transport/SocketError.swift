#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a socket could not be resolved, created, bound or listened on. Compare on `code`;
/// `errno` and `detail` make the one sentence an operator sees.
public struct SocketError: Error, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable, Hashable {
        case resolutionFailed, socketFailed, bindFailed, listenFailed
    }

    public let code: Code
    /// The `errno` of the failing call, when there was one.
    public let errno: Int32?
    public let detail: String

    init(_ code: Code, _ detail: String, errno: Int32? = nil) {
        self.code = code
        self.detail = detail
        self.errno = errno
    }

    public var description: String {
        guard let errno else { return detail }
        return detail + ": " + String(cString: strerror(errno))
    }
}
