/// Certificate chain and private key files for terminating TLS on the public listener.
public struct TLSFiles: Sendable, Hashable {
    /// PEM certificate chain file, as written (relative paths are relative to the working directory).
    public var certificateFile: String
    /// PEM private key file, as written.
    public var privateKeyFile: String

    public init(certificateFile: String, privateKeyFile: String) {
        self.certificateFile = certificateFile
        self.privateKeyFile = privateKeyFile
    }
}
