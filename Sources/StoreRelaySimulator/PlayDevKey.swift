public import StoreRelayCrypto
import StoreRelayCore
import StoreRelayGooglePlay
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The RSA key `storerelay simulate --store play` signs Pub/Sub push tokens with, kept in
/// `DATA/dev-play/` in place of Google's: `key.pem` (PKCS#8, mode 0600) and `certs.json`, its
/// public half as a JSON Web Key Set shaped like `https://www.googleapis.com/oauth2/v3/certs`.
///
/// Nothing trusts this key on its own: a gateway accepts its pushes only when
/// `google-certs-url` points at a server of `certs.json` (`simulate --store play --serve-keys`).
public final class PlayDevKey: Sendable {
    public static let directoryName = "dev-play"
    static let fileNames = ["key.pem", "certs.json"]

    public let directory: String
    public let key: RSAPrivateKey
    /// The key's id in the key set and in every token's header: a hash of its modulus.
    public let kid: String
    /// The key set document, as served.
    public let keySet: String
    /// Whether this call created the key (false: loaded from an earlier run).
    public let wasCreated: Bool

    public var keySetPath: String { directory + "/certs.json" }

    init(directory: String, key: RSAPrivateKey, wasCreated: Bool) throws(SimulatorError) {
        self.directory = directory
        self.key = key
        self.wasCreated = wasCreated
        do {
            let publicKey = try key.publicKey()
            let (modulus, _) = try publicKey.components()
            kid = String(SHA256.hexHash(modulus).prefix(40))
            keySet = try JSONWebKeySet.document([(kid, publicKey)])
        } catch {
            throw SimulatorError(.signing, "cannot describe the dev Play key: \(error.reason)")
        }
    }

    /// The dev key of a data directory (`DATA/dev-play/`), created on first use.
    public static func loadOrCreate(dataDirectory: String) throws(SimulatorError) -> PlayDevKey {
        try loadOrCreate(directory: dataDirectory + "/" + directoryName)
    }

    /// Loads the key in `directory`, or creates it there (in a private sibling renamed into
    /// place, so a crash never leaves half of it) when the directory does not exist.
    public static func loadOrCreate(directory: String) throws(SimulatorError) -> PlayDevKey {
        if PrivateFiles.exists(directory) { return try load(directory: directory) }
        var made: PlayDevKey?
        let created = try PrivateFiles.createWhole(directory, files: fileNames, what: "the new dev Play key") { staging throws(SimulatorError) in
            let key: RSAPrivateKey
            let pem: String
            do throws(CryptoError) {
                key = try RSAPrivateKey.generate()
                pem = try key.pemString()
            } catch {
                throw SimulatorError(.signing, "cannot make the dev Play key: \(error.reason)")
            }
            let new = try PlayDevKey(directory: directory, key: key, wasCreated: true)
            try PrivateFiles.create(staging + "/key.pem", pem, mode: 0o600)
            try PrivateFiles.create(staging + "/certs.json", new.keySet + "\n", mode: 0o644)
            made = new
        }
        guard created, let made else { return try load(directory: directory) }
        return made
    }

    /// Reads the key. `keySet` is computed from it, not read from `certs.json`, so the set
    /// served always matches the key that signs.
    static func load(directory: String) throws(SimulatorError) -> PlayDevKey {
        guard let pem = try PrivateFiles.contents(directory + "/key.pem") else {
            throw SimulatorError(.certificateAuthority, "the dev Play key in \(directory) is incomplete (no key.pem); remove the directory to create a new one")
        }
        let key: RSAPrivateKey
        do {
            key = try RSAPrivateKey(pemString: pem)
        } catch {
            throw SimulatorError(.certificateAuthority, "\(directory)/key.pem is not an RSA private key (\(error.reason)); remove the directory to create a new one")
        }
        return try PlayDevKey(directory: directory, key: key, wasCreated: false)
    }
}
