/// What a TLS-terminating listener needs: a server `TLSContext` built from the `tls cert.pem
/// key.pem` line of routes.conf, and a way to start one server-side engine per accepted socket.
public struct TLSServerContext: Sendable {
    public let context: TLSContext

    /// Loads the PEM chain (leaf first) and the PEM private key; fails when they do not match.
    public init(certificateChainFile: String, privateKeyFile: String) throws(TLSError) {
        context = try TLSContext(serverCertificateChainFile: certificateChainFile, privateKeyFile: privateKeyFile)
    }

    /// A fresh server-mode engine for one accepted connection.
    public func makeConnection() throws(TLSError) -> TLSConnection {
        try TLSConnection(serverContext: context)
    }
}
