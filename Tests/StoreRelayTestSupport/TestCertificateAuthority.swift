import Foundation
import StoreRelayCore

/// A throwaway P-256 PKI shaped like Apple's App Store signing chain, generated with the
/// `openssl` command-line tool in a fresh temporary directory, plus a JWS signer that also
/// uses the CLI, so tests never trust StoreRelay's own OpenSSL code to make their inputs.
///
/// root → intermediate (CA:true, OID 1.2.840.113635.100.6.2.1) → leaf (OID ...6.11.1), and
/// the broken variants a verifier must reject (or, for `mismatchedX5CRoot`, accept).
public final class TestCertificateAuthority: Sendable {
    /// The chains this authority can sign with.
    public enum Variant: String, Sendable, CaseIterable {
        /// Everything right: must verify against `rootPEM`.
        case valid
        /// The leaf lacks 1.2.840.113635.100.6.11.1.
        case leafWithoutOID
        /// The intermediate lacks 1.2.840.113635.100.6.2.1 (the leaf under it has its OID).
        case intermediateWithoutOID
        /// The leaf was valid 2020-01-01 to 2021-01-01 only.
        case expiredLeaf
        /// root, intermediate and leaf all from another, untrusted root.
        case unknownRoot
        /// The valid leaf and intermediate, but `x5c[2]` is the unknown root rather than the
        /// trusted one; verifiers anchor on their own roots, so this must still verify.
        case mismatchedX5CRoot
    }

    /// One chain as a JWS header carries it.
    public struct Chain: Sendable {
        /// DER of leaf, intermediate and third certificate, in `x5c` order.
        public let certificatesDER: [[UInt8]]
        /// `x5c`: standard base64 of each DER certificate.
        public var x5c: [String] { certificatesDER.map { Base64.encode($0) } }
        /// The private key of the leaf, as a PEM file path.
        public let leafKeyPath: String

        /// A chain from any certificates and key (for example Apple's own test CA files).
        public init(certificatesDER: [[UInt8]], leafKeyPath: String) {
            self.certificatesDER = certificatesDER
            self.leafKeyPath = leafKeyPath
        }
    }

    public let directory: String
    /// The root to trust (PEM).
    public let rootPEM: String
    /// The untrusted root of `unknownRoot` (PEM).
    public let unknownRootPEM: String
    private let chains: [Variant: Chain]

    /// One authority per test process: building one costs about twenty openssl runs.
    public static let shared: TestCertificateAuthority = {
        do { return try TestCertificateAuthority() } catch { fatalError("cannot build the test CA with openssl: \(error)") }
    }()

    public init() throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("storerelay-ca-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        directory = base
        let tool = Tool(directory: base)

        try tool.writeExtensions()
        try tool.write("intermediate-no-oid.ext", "basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\nsubjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid\n")
        try tool.write("leaf-no-oid.ext", "basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nauthorityKeyIdentifier=keyid\n")

        for key in ["root", "intermediate", "leaf", "other-root", "other-intermediate", "other-leaf"] {
            try tool.openssl(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", "\(key).key"])
        }
        try tool.selfSigned("root", subject: "/C=US/O=StoreRelay Tests/CN=StoreRelay Test Root")
        try tool.selfSigned("other-root", subject: "/C=US/O=Somebody Else/CN=Unknown Test Root")
        try tool.issue("intermediate", key: "intermediate", subject: "/CN=StoreRelay Test Intermediate", by: "root", ext: "intermediate.ext")
        try tool.issue("intermediate-no-oid", key: "intermediate", subject: "/CN=StoreRelay Test Intermediate Without OID", by: "root", ext: "intermediate-no-oid.ext")
        try tool.issue("leaf", key: "leaf", subject: "/CN=StoreRelay Test Leaf", by: "intermediate", ext: "leaf.ext")
        try tool.issue("leaf-no-oid", key: "leaf", subject: "/CN=StoreRelay Test Leaf Without OID", by: "intermediate", ext: "leaf-no-oid.ext")
        try tool.issue("leaf-under-no-oid", key: "leaf", subject: "/CN=StoreRelay Test Leaf", by: "intermediate-no-oid", issuerKey: "intermediate", ext: "leaf.ext")
        try tool.issue("other-intermediate", key: "other-intermediate", subject: "/CN=Unknown Test Intermediate", by: "other-root", ext: "intermediate.ext")
        try tool.issue("other-leaf", key: "other-leaf", subject: "/CN=Unknown Test Leaf", by: "other-intermediate", ext: "leaf.ext")
        try tool.issueExpired("leaf-expired", key: "leaf", subject: "/CN=StoreRelay Expired Test Leaf", by: "intermediate", ext: "leaf.ext")

        rootPEM = try tool.read("root.pem")
        unknownRootPEM = try tool.read("other-root.pem")
        func chain(_ names: [String], key: String) throws -> Chain {
            Chain(certificatesDER: try names.map { try Self.der(fromPEM: tool.read("\($0).pem")) }, leafKeyPath: tool.path("\(key).key"))
        }
        chains = [
            .valid: try chain(["leaf", "intermediate", "root"], key: "leaf"),
            .leafWithoutOID: try chain(["leaf-no-oid", "intermediate", "root"], key: "leaf"),
            .intermediateWithoutOID: try chain(["leaf-under-no-oid", "intermediate-no-oid", "root"], key: "leaf"),
            .expiredLeaf: try chain(["leaf-expired", "intermediate", "root"], key: "leaf"),
            .unknownRoot: try chain(["other-leaf", "other-intermediate", "other-root"], key: "other-leaf"),
            .mismatchedX5CRoot: try chain(["leaf", "intermediate", "other-root"], key: "leaf"),
        ]
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }

    /// A separate chain shaped like `valid` (root, intermediate and leaf, with the marker
    /// OIDs) that has been valid since `daysAgo` days ago, built in `directory`: notifications
    /// dated that far back verify under it, for tests of what happens to old notifications
    /// (a stale replay). Trust `rootPEM` to accept them; sign with `signJWS(payload:chain:)`.
    public static func backdated(daysAgo: Int, in directory: URL) throws -> (rootPEM: String, chain: Chain) {
        let tool = Tool(directory: directory.path)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMddHHmmss'Z'"
        let start = formatter.string(from: Date().addingTimeInterval(-Double(daysAgo) * 86_400))
        let end = formatter.string(from: Date().addingTimeInterval(3_650 * 86_400))
        try tool.writeExtensions()
        for key in ["root", "intermediate", "leaf"] {
            try tool.openssl(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", "\(key).key"])
        }
        try tool.issueDated("root", key: "root", subject: "/CN=StoreRelay Backdated Test Root", by: nil, ext: "root.ext", from: start, until: end)
        try tool.issueDated("intermediate", key: "intermediate", subject: "/CN=StoreRelay Backdated Test Intermediate", by: "root",
                            ext: "intermediate.ext", from: start, until: end)
        try tool.issueDated("leaf", key: "leaf", subject: "/CN=StoreRelay Backdated Test Leaf", by: "intermediate",
                            ext: "leaf.ext", from: start, until: end)
        let chain = Chain(certificatesDER: try ["leaf", "intermediate", "root"].map { try der(fromPEM: tool.read("\($0).pem")) },
                          leafKeyPath: tool.path("leaf.key"))
        return (try tool.read("root.pem"), chain)
    }

    public func chain(_ variant: Variant) -> Chain { chains[variant]! }

    /// A compact JWS of `payload` (JSON text) signed by `variant`'s leaf key with
    /// `openssl dgst -sha256 -sign`. `header` replaces the default
    /// `{"alg":"ES256","x5c":[...]}` when given (JSON text).
    public func signJWS(payload: String, variant: Variant = .valid, header: String? = nil) throws -> String {
        try Self.signJWS(payload: payload, chain: chain(variant), header: header)
    }

    /// Signs `payload` with `chain`'s leaf key; the default header carries `chain.x5c`.
    public static func signJWS(payload: String, chain: Chain, header: String? = nil) throws -> String {
        let headerText = header ?? "{\"alg\":\"ES256\",\"x5c\":[" + chain.x5c.map { "\"\($0)\"" }.joined(separator: ",") + "]}"
        let signingInput = Base64.urlEncode(Array(headerText.utf8)) + "." + Base64.urlEncode(Array(payload.utf8))
        let der = try CommandRunner.run("openssl", ["dgst", "-sha256", "-sign", chain.leafKeyPath],
                                        stdin: Array(signingInput.utf8), check: true).stdoutBytes
        guard let raw = Self.rawSignature(fromDER: der) else { throw CommandFailure(command: ["dgst"], status: 0, stderr: "unexpected signature DER") }
        return signingInput + "." + Base64.urlEncode(raw)
    }

    /// The DER of the first PEM block of `pem`.
    public static func der(fromPEM pem: String) throws -> [UInt8] {
        let body = pem.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            .drop(while: { !$0.hasPrefix("-----BEGIN") }).dropFirst()
            .prefix(while: { !$0.hasPrefix("-----END") }).joined()
        guard let der = Base64.decode(body) else { throw CommandFailure(command: ["pem"], status: 0, stderr: "not PEM") }
        return der
    }

    /// Converts a DER `ECDSA-Sig-Value` (SEQUENCE of two INTEGERs) to JWS raw `R‖S`, written
    /// here independently of the verifier's converter (StoreRelayCrypto).
    public static func rawSignature(fromDER der: [UInt8]) -> [UInt8]? {
        var index = 0
        func length() -> Int? {
            guard index < der.count else { return nil }
            let first = Int(der[index]); index += 1
            if first < 0x80 { return first }
            guard first == 0x81, index < der.count else { return nil }
            defer { index += 1 }
            return Int(der[index])
        }
        func integer() -> [UInt8]? {
            guard index < der.count, der[index] == 0x02 else { return nil }
            index += 1
            guard let n = length(), index + n <= der.count else { return nil }
            var bytes = Array(der[index..<index + n]); index += n
            while bytes.count > 32, bytes.first == 0 { bytes.removeFirst() }
            guard bytes.count <= 32 else { return nil }
            return Array(repeating: 0, count: 32 - bytes.count) + bytes
        }
        guard der.first == 0x30 else { return nil }
        index = 1
        guard let total = length(), index + total == der.count, let r = integer(), let s = integer(), index == der.count else { return nil }
        return r + s
    }
}

/// The `openssl` invocations, each run in the authority's directory.
private struct Tool {
    let directory: String

    func path(_ name: String) -> String { directory + "/" + name }
    func write(_ name: String, _ text: String) throws { try text.write(toFile: path(name), atomically: true, encoding: .utf8) }
    func read(_ name: String) throws -> String { try String(contentsOfFile: path(name), encoding: .utf8) }
    func openssl(_ arguments: [String]) throws {
        try CommandRunner.run("openssl", arguments, directory: URL(fileURLWithPath: directory), check: true)
    }

    /// The extension files of a chain shaped like Apple's: root.ext, intermediate.ext (with
    /// the WWDR marker OID) and leaf.ext (with the receipt-signing marker OID).
    func writeExtensions() throws {
        try write("root.ext", "basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\nsubjectKeyIdentifier=hash\n")
        try write("intermediate.ext", "basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\nsubjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid\n1.2.840.113635.100.6.2.1=ASN1:NULL\n")
        try write("leaf.ext", "basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nauthorityKeyIdentifier=keyid\n1.2.840.113635.100.6.11.1=ASN1:NULL\n")
    }

    func selfSigned(_ name: String, subject: String) throws {
        try openssl(["req", "-x509", "-new", "-key", "\(name).key", "-sha256", "-days", "3650", "-subj", subject,
                     "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
                     "-out", "\(name).pem"])
    }

    func csr(_ name: String, key: String, subject: String) throws {
        try openssl(["req", "-new", "-key", "\(key).key", "-subj", subject, "-out", "\(name).csr"])
    }

    /// Issues `name` for `key`; the issuer's key file is `issuerKey` (its name by default).
    func issue(_ name: String, key: String, subject: String, by issuer: String, issuerKey: String? = nil, ext: String) throws {
        try csr(name, key: key, subject: subject)
        try openssl(["x509", "-req", "-in", "\(name).csr", "-CA", "\(issuer).pem", "-CAkey", "\(issuerKey ?? issuer).key",
                     "-set_serial", String(UInt32.random(in: 1...UInt32.max)), "-days", "1825", "-sha256",
                     "-extfile", ext, "-out", "\(name).pem"])
    }

    /// `openssl x509` in OpenSSL 3.0 cannot set a start date in the past; `openssl ca` can.
    func issueExpired(_ name: String, key: String, subject: String, by issuer: String, ext: String) throws {
        try issueDated(name, key: key, subject: subject, by: issuer, ext: ext,
                       from: "20200101000000Z", until: "20210101000000Z")
    }

    /// Issues `name` valid from `start` to `end` (`YYYYMMDDHHMMSSZ`) with `openssl ca`; with
    /// no `issuer`, self-signed by `key`.
    func issueDated(_ name: String, key: String, subject: String, by issuer: String?, ext: String,
                    from start: String, until end: String) throws {
        try csr(name, key: key, subject: subject)
        if !FileManager.default.fileExists(atPath: path("ca.cnf")) {
            try write("index.txt", "")
            try write("serial", "1000\n")
            try write("ca.cnf", """
                [ ca ]
                default_ca = test
                [ test ]
                database = index.txt
                new_certs_dir = .
                serial = serial
                default_md = sha256
                policy = anything
                unique_subject = no
                [ anything ]
                commonName = supplied

                """)
        }
        let signer = issuer.map { ["-cert", "\($0).pem", "-keyfile", "\($0).key"] } ?? ["-selfsign", "-keyfile", "\(key).key"]
        try openssl(["ca", "-batch", "-config", "ca.cnf"] + signer + [
            "-in", "\(name).csr", "-out", "\(name).pem", "-notext", "-startdate", start, "-enddate", end, "-extfile", ext])
    }
}
