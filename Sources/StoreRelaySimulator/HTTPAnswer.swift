/// The gateway's answer to a posted notification.
public struct HTTPAnswer: Sendable, Hashable {
    public let status: Int
    public let reason: String
    public let body: String

    public var isSuccess: Bool { (200..<300).contains(status) }

    public init(status: Int, reason: String, body: String) {
        self.status = status
        self.reason = reason
        self.body = body
    }
}
