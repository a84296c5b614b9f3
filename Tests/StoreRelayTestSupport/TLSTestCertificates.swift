import Foundation
import StoreRelayCore

/// A test PKI made with the `openssl` command-line tool in a fresh temporary directory, once
/// per test process: a trusted test CA, server certificates it issued, and a certificate from
/// a second CA that nobody trusts.
public struct TLSTestCertificates: Sendable {
    /// A certificate and its private key, as PEM files.
    public struct Identity: Sendable {
        public var certificateFile: String
        public var privateKeyFile: String
    }

    public let directory: URL
    /// The test CA certificate (PEM): trust it with a destination's `ca-file`, curl's `--cacert`.
    public let caFile: String
    /// Issued by the test CA for `localhost` and `127.0.0.1`.
    public let localhost: Identity
    /// Issued by the test CA for `other.example` only: a wrong name for `localhost`.
    public let otherHost: Identity
    /// Issued for `localhost` by an unknown CA.
    public let untrusted: Identity
    /// A client certificate (`clientAuth`) issued by the test CA: what a client presents to a
    /// server that authenticates its clients (mutual TLS).
    public let client: Identity

    private static let cache = Locked<TLSTestCertificates?>(nil)

    /// The process-wide test PKI, generated on first use.
    public static func shared() throws -> TLSTestCertificates {
        try cache.withLock { cached in
            if let cached { return cached }
            let made = try TLSTestCertificates()
            cached = made
            return made
        }
    }

    private init() throws {
        directory = try TestPaths.makeTemporaryDirectory("storerelay-tls")
        let dir = directory
        func path(_ name: String) -> String { dir.appendingPathComponent(name).path }

        try Self.makeCA(key: path("ca.key"), cert: path("ca.pem"), name: "StoreRelay Test CA")
        try Self.makeCA(key: path("unknown-ca.key"), cert: path("unknown-ca.pem"), name: "Unknown Test CA")
        caFile = path("ca.pem")
        localhost = try Self.issue(
            "localhost", san: "DNS:localhost,IP:127.0.0.1,IP:::1", caKey: path("ca.key"), caCert: path("ca.pem"),
            prefix: path("localhost"))
        otherHost = try Self.issue(
            "other.example", san: "DNS:other.example", caKey: path("ca.key"), caCert: path("ca.pem"),
            prefix: path("other"))
        untrusted = try Self.issue(
            "localhost", san: "DNS:localhost,IP:127.0.0.1", caKey: path("unknown-ca.key"),
            caCert: path("unknown-ca.pem"), prefix: path("untrusted"))
        client = try Self.issue(
            "storerelay-client", san: "DNS:storerelay-client", caKey: path("ca.key"), caCert: path("ca.pem"),
            prefix: path("client"), usage: "clientAuth")
    }

    private static func makeCA(key: String, cert: String, name: String) throws {
        try openssl([
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", key, "-out", cert, "-days", "3650", "-subj", "/CN=\(name)",
            "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign,cRLSign",
        ])
    }

    private static func issue(_ commonName: String, san: String, caKey: String, caCert: String, prefix: String,
                              usage: String = "serverAuth") throws -> Identity {
        let extensions = prefix + ".ext"
        try Data("""
            subjectAltName=\(san)
            basicConstraints=critical,CA:FALSE
            keyUsage=critical,digitalSignature
            extendedKeyUsage=\(usage)

            """.utf8).write(to: URL(fileURLWithPath: extensions))
        try openssl([
            "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", prefix + ".key", "-out", prefix + ".csr", "-subj", "/CN=\(commonName)",
        ])
        try openssl([
            "x509", "-req", "-in", prefix + ".csr", "-CA", caCert, "-CAkey", caKey,
            "-set_serial", String(UInt32.random(in: 1...UInt32.max)), "-days", "825",
            "-extfile", extensions, "-out", prefix + ".pem",
        ])
        return Identity(certificateFile: prefix + ".pem", privateKeyFile: prefix + ".key")
    }

    private static func openssl(_ arguments: [String]) throws {
        let result = try CommandRunner.run("openssl", arguments)
        guard result.status == 0 else {
            throw GatewayProcessError(message: "openssl \(arguments.first ?? "") failed: \(result.stderr)")
        }
    }
}
