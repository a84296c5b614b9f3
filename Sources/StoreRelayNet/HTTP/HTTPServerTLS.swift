#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The certificate chain and key a TLS-terminating `HTTPServer` presents (TLS 1.2 and
/// later, forward-secret AEAD suites only; see `StoreRelayNet.TLSContext`).
///
/// Loaded once, before the server starts, so a wrong path or a key that does not match the
/// certificate is a start-up error rather than a failure on every connection. It wraps the
/// TLS module's server context so that no TLS type appears in this module's public API.
public struct HTTPServerTLS: Sendable {
    /// The PEM certificate chain file, leaf first, as given.
    public let certificateChainFile: String
    /// The PEM private key file, as given.
    public let privateKeyFile: String
    let context: TLSServerContext

    /// Loads both PEM files. Throws `.tlsSetupFailed` naming the file that is unreadable,
    /// not PEM, or (for the key) does not match the certificate.
    public init(certificateChainFile: String, privateKeyFile: String) throws(HTTPServerError) {
        // OpenSSL's reason for a missing file is a packed error code; errno reads better.
        for (file, what) in [(certificateChainFile, "certificate file"), (privateKeyFile, "private key file")] {
            guard access(file, R_OK) == 0 else {
                throw HTTPServerError(.tlsSetupFailed, "cannot read the TLS \(what) \(file)", errno: errno)
            }
        }
        self.certificateChainFile = certificateChainFile
        self.privateKeyFile = privateKeyFile
        do {
            context = try TLSServerContext(certificateChainFile: certificateChainFile, privateKeyFile: privateKeyFile)
        } catch {
            // TLSContext's reason already names the file that failed.
            throw HTTPServerError(.tlsSetupFailed, error.reason)
        }
    }
}
