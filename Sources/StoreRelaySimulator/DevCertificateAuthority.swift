public import StoreRelayVerification
public import StoreRelayCrypto
public import StoreRelayCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A local certificate authority shaped like Apple's App Store signing chain, kept in
/// `DATA/dev-ca/` so `storerelay simulate` can sign notifications a gateway will verify.
///
/// root (self-signed) → intermediate (Apple's WWDR marker OID 1.2.840.113635.100.6.2.1) →
/// leaf (receipt-signing marker OID 1.2.840.113635.100.6.11.1), all P-256, valid from
/// yesterday for ten years. Files: `root.pem`, `intermediate.pem`, `leaf.pem` and
/// `leaf-key.pem` (mode 0600). The root and intermediate keys are thrown away once they have
/// signed: nothing ever needs them again, and a key that is not on disk cannot leak.
///
/// Nothing trusts this CA on its own: a gateway accepts its notifications only when the
/// configuration names `trust-root DATA/dev-ca/root.pem`.
public final class DevCertificateAuthority: Sendable {
    /// The directory name under the data directory.
    public static let directoryName = "dev-ca"
    static let fileNames = ["root.pem", "intermediate.pem", "leaf.pem", "leaf-key.pem"]

    /// Where the files are.
    public let directory: String
    public let root: Certificate
    public let intermediate: Certificate
    public let leaf: Certificate
    /// Signs every notification and nested JWS.
    public let leafKey: P256PrivateKey
    /// Whether this call created the CA (false: loaded from an earlier run).
    public let wasCreated: Bool

    /// The root certificate's path: what a `trust-root` line must name.
    public var rootPath: String { directory + "/root.pem" }

    /// The JWS `x5c` header: leaf, intermediate, root, each standard base64 DER.
    public var x5c: [String] { [leaf, intermediate, root].map { Base64.encode($0.derBytes) } }

    init(directory: String, root: Certificate, intermediate: Certificate, leaf: Certificate,
         leafKey: P256PrivateKey, wasCreated: Bool) {
        self.directory = directory
        self.root = root
        self.intermediate = intermediate
        self.leaf = leaf
        self.leafKey = leafKey
        self.wasCreated = wasCreated
    }

    /// The dev CA of a data directory (`DATA/dev-ca/`), created on first use.
    public static func loadOrCreate(dataDirectory: String, clock: any TimeSource = WallClock()) throws(SimulatorError) -> DevCertificateAuthority {
        try loadOrCreate(directory: dataDirectory + "/" + directoryName, clock: clock)
    }

    /// Loads the CA in `directory`, or creates it there when the directory does not exist.
    ///
    /// Creation happens in a private sibling directory renamed into place at the end, so a
    /// crash never leaves half a CA, and two simulators racing both end up with the winner's.
    public static func loadOrCreate(directory: String, clock: any TimeSource = WallClock()) throws(SimulatorError) -> DevCertificateAuthority {
        if PrivateFiles.exists(directory) {
            return try load(directory: directory, at: clock.now())
        }
        var made: IssuedChain?
        let created = try PrivateFiles.createWhole(directory, files: fileNames, what: "the new dev CA") { staging throws(SimulatorError) in
            let issued = try IssuedChain.issue(now: clock.now())
            try PrivateFiles.create(staging + "/root.pem", issued.pem(issued.root), mode: 0o644)
            try PrivateFiles.create(staging + "/intermediate.pem", issued.pem(issued.intermediate), mode: 0o644)
            try PrivateFiles.create(staging + "/leaf.pem", issued.pem(issued.leaf), mode: 0o644)
            try PrivateFiles.create(staging + "/leaf-key.pem", issued.leafKeyPEM, mode: 0o600)
            made = issued
        }
        guard created, let issued = made else { return try load(directory: directory, at: clock.now()) }
        return DevCertificateAuthority(
            directory: directory, root: issued.root, intermediate: issued.intermediate,
            leaf: issued.leaf, leafKey: issued.leafKey, wasCreated: true)
    }

    /// Reads and checks an existing CA: every file present, the marker OIDs, the leaf key
    /// matching the leaf, the leaf still valid.
    static func load(directory: String, at now: Timestamp) throws(SimulatorError) -> DevCertificateAuthority {
        var texts: [String: String] = [:]
        for name in fileNames {
            guard let text = try PrivateFiles.contents(directory + "/" + name) else {
                throw SimulatorError(.certificateAuthority,
                                     "the dev CA in \(directory) is incomplete (no \(name)); remove the directory to create a new one")
            }
            texts[name] = text
        }
        func certificate(_ name: String) throws(SimulatorError) -> Certificate {
            do {
                return try Certificate(pemString: texts[name]!)
            } catch {
                throw SimulatorError(.certificateAuthority, "\(directory)/\(name) is not a PEM certificate: \(error.reason)")
            }
        }
        let root = try certificate("root.pem")
        let intermediate = try certificate("intermediate.pem")
        let leaf = try certificate("leaf.pem")
        let key: P256PrivateKey
        do {
            key = try P256PrivateKey(pemString: texts["leaf-key.pem"]!)
        } catch {
            throw SimulatorError(.certificateAuthority, "\(directory)/leaf-key.pem is not a P-256 private key: \(error.reason)")
        }
        guard leaf.hasExtension(oid: IssuedChain.leafMarkerOID),
              intermediate.hasExtension(oid: IssuedChain.intermediateMarkerOID)
        else {
            throw SimulatorError(.certificateAuthority, "the dev CA in \(directory) lacks Apple's marker OIDs; remove the directory to create a new one")
        }
        guard try keyMatches(key, leaf) else {
            throw SimulatorError(.certificateAuthority, "\(directory)/leaf-key.pem does not belong to leaf.pem; remove the directory to create a new one")
        }
        guard now <= leaf.notAfter else {
            throw SimulatorError(.certificateAuthority, "the dev CA in \(directory) expired on \(leaf.notAfter.iso8601); remove the directory to create a new one")
        }
        return DevCertificateAuthority(directory: directory, root: root, intermediate: intermediate,
                                       leaf: leaf, leafKey: key, wasCreated: false)
    }

    /// Signs a probe and checks it with the certificate's key: the simplest proof they pair.
    private static func keyMatches(_ key: P256PrivateKey, _ certificate: Certificate) throws(SimulatorError) -> Bool {
        let probe = Array("storerelay dev CA key check".utf8)
        do {
            return try certificate.publicKey().isValidES256Signature(key.signES256(probe), for: probe)
        } catch {
            throw SimulatorError(.certificateAuthority, "cannot check the dev CA leaf key: \(error.reason)")
        }
    }
}
