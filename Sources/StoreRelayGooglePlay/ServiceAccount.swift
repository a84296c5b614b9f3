public import StoreRelayNet
import StoreRelayCore
import StoreRelayCrypto

/// A Google Cloud service account's JSON key file (`service-account FILE` in a `play` block):
/// what signs the OAuth2 JWT-bearer assertions that buy access tokens for the Play
/// Developer API.
///
/// Google's console writes the file with `type` `service_account`, `project_id`,
/// `private_key_id`, `private_key` (an unencrypted PKCS#8 PEM), `client_email` and
/// `token_uri`; each is checked here, so a wrong file fails at start with a sentence naming
/// the field, not at the first enrichment. Like an `api-key` file, the key should be readable
/// by its owner alone: `storerelay check` and `serve` warn when it is not.
public struct ServiceAccount: Sendable {
    /// Google's token endpoint, when a file has no `token_uri` (every file Google writes has one).
    public static let defaultTokenURI = "https://oauth2.googleapis.com/token"
    /// The most of a service-account file that is read (Google's are about 2.4 KB).
    public static let maxFileSize = 64 * 1024

    /// `...@PROJECT.iam.gserviceaccount.com`: the assertion's `iss`.
    public let clientEmail: String
    /// The key's id: the assertion header's `kid`.
    public let privateKeyId: String
    /// Where assertions are exchanged for access tokens (https, or http on loopback only).
    public let tokenURI: HTTPURL
    public let projectId: String?
    let key: RSAPrivateKey

    public init(clientEmail: String, privateKeyId: String, tokenURI: HTTPURL, projectId: String? = nil, key: RSAPrivateKey) {
        self.clientEmail = clientEmail
        self.privateKeyId = privateKeyId
        self.tokenURI = tokenURI
        self.projectId = projectId
        self.key = key
    }

    /// Reads the file at `path`; the error names the file and what is wrong with it.
    public static func load(_ path: String) throws(PlayAPIError) -> ServiceAccount {
        guard let size = PrivateFiles.fileSize(path) else {
            throw PlayAPIError(.configuration, "cannot read the service-account file \(path): no such regular file")
        }
        guard size <= maxFileSize else {
            throw PlayAPIError(.configuration, "the service-account file \(path) is \(size) bytes, too large to be a service-account key")
        }
        let bytes: [UInt8]
        do {
            bytes = try PrivateFiles.readAll(path)
        } catch {
            throw PlayAPIError(.configuration, "cannot read the service-account file \(path): \(error)")
        }
        return try ServiceAccount(json: bytes, source: path)
    }

    /// Parses a service-account key file's contents; `source` names it in errors.
    public init(json bytes: [UInt8], source: String) throws(PlayAPIError) {
        func fail(_ why: String) -> PlayAPIError {
            PlayAPIError(.configuration, "the service-account file \(source) \(why)")
        }
        guard let document = try? JSONValue.parse(bytes, maxDepth: 8), document.objectValue != nil else {
            throw fail("is not a JSON object (expected the key file Google Cloud's console downloads)")
        }
        func field(_ name: String) throws(PlayAPIError) -> String {
            guard let member = document[name] else { throw fail("has no \"\(name)\"") }
            guard let text = member.stringValue, !text.isEmpty else { throw fail("has an empty or non-string \"\(name)\"") }
            return text
        }
        let type = try field("type")
        guard type == "service_account" else {
            throw fail("has type \"\(type.prefix(40))\", not \"service_account\" (an OAuth client or user credential cannot call the API unattended)")
        }
        let email = try field("client_email")
        guard email.contains("@"), !email.contains(where: { $0 == " " || $0 == "\n" }) else {
            throw fail("has a \"client_email\" that is not an email address")
        }
        let keyId = try field("private_key_id")
        let pem = try field("private_key")
        let key: RSAPrivateKey
        do {
            key = try RSAPrivateKey(pemString: pem)
        } catch {
            throw fail("has a \"private_key\" that is not an unencrypted RSA PEM key: \(error.reason)")
        }
        let tokenText = document["token_uri"] == nil ? Self.defaultTokenURI : try field("token_uri")
        let tokenURI: HTTPURL
        do {
            tokenURI = try HTTPURL.parse(tokenText)
        } catch {
            throw fail("has a \"token_uri\" that is not a URL: \(error.description)")
        }
        guard tokenURI.usesTLS || tokenURI.isLoopback else {
            throw fail("has a plain http \"token_uri\"; http is allowed only for a loopback host (expected https)")
        }
        self.init(clientEmail: email, privateKeyId: keyId, tokenURI: tokenURI,
                  projectId: document["project_id"]?.stringValue, key: key)
    }
}
