/// An AWS access key, its secret and, for temporary credentials (an assumed role, SSO), the
/// session token. Descriptions and mirrors never show the secret or the token.
public struct AWSCredentials: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var accessKeyId: String
    public var secretAccessKey: String
    public var sessionToken: String?

    public init(accessKeyId: String, secretAccessKey: String, sessionToken: String? = nil) {
        self.accessKeyId = accessKeyId
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
    }

    public var description: String { "\(accessKeyId) (secret <set>\(sessionToken == nil ? "" : ", session token <set>"))" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["accessKeyId": accessKeyId], displayStyle: .struct) }
}
