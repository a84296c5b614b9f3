public import StoreRelayCrypto
import StoreRelayCore

/// What signs one app's App Store Server API tokens: an In-App Purchase key from App Store
/// Connect (`api-key FILE KEY-ID ISSUER-ID`) and the app's bundle id.
public struct APICredentials: Sendable {
    public let keyId: String
    public let issuerId: String
    public let bundleId: String
    let key: P256PrivateKey

    public init(keyId: String, issuerId: String, bundleId: String, key: P256PrivateKey) {
        self.keyId = keyId
        self.issuerId = issuerId
        self.bundleId = bundleId
        self.key = key
    }

    /// Reads the `.p8` file App Store Connect gives (PKCS#8 PEM of a P-256 key); the error
    /// names the file and what is wrong with it.
    public static func load(
        keyFile path: String, keyId: String, issuerId: String, bundleId: String
    ) throws(AppStoreAPIError) -> APICredentials {
        guard let bytes = try? PrivateFiles.readAll(path) else {
            throw AppStoreAPIError(.configuration, "cannot read the api-key file \(path)")
        }
        let pem = String(decoding: bytes, as: UTF8.self)
        do {
            return APICredentials(keyId: keyId, issuerId: issuerId, bundleId: bundleId, key: try P256PrivateKey(pemString: pem))
        } catch {
            throw AppStoreAPIError(.configuration, "the api-key file \(path) is not an In-App Purchase key (PKCS#8 P-256 PEM): \(error.reason)")
        }
    }
}
