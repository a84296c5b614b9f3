import Foundation
import Testing
import StoreRelayGooglePlay
import StoreRelayCrypto
import StoreRelayCore
import StoreRelayTestSupport

/// The service-account key file: what Google's console writes is taken, and each missing or
/// wrong field is refused with a sentence that names it.
@Suite struct ServiceAccountTests {
    static let key = try! RSAPrivateKey.generate()
    static let pem = try! key.pemString()

    static func document(_ overrides: [(String, JSONValue)] = []) -> [UInt8] {
        ServiceAccountFile.json(
            clientEmail: "relay@acme-prod.iam.gserviceaccount.com", privateKeyId: "abc123", privateKeyPEM: pem,
            tokenURI: "https://oauth2.googleapis.com/token", overrides: overrides
        ).serializedBytes()
    }

    func refusal(_ overrides: [(String, JSONValue)]) -> String? {
        do {
            _ = try ServiceAccount(json: Self.document(overrides), source: "play-sa.json")
            return nil
        } catch {
            #expect(error.kind == .configuration)
            #expect(error.message.contains("play-sa.json"), "the error names the file: \(error.message)")
            return error.message
        }
    }

    @Test func readsTheFileGoogleWrites() throws {
        let directory = try TestPaths.makeTemporaryDirectory("storerelay-sa")
        let path = directory.appendingPathComponent("play-sa.json").path
        try ServiceAccountFile.write(to: path, clientEmail: "relay@acme-prod.iam.gserviceaccount.com", privateKeyId: "abc123",
                                     privateKeyPEM: Self.pem, tokenURI: "https://oauth2.googleapis.com/token")
        let account = try ServiceAccount.load(path)
        #expect(account.clientEmail == "relay@acme-prod.iam.gserviceaccount.com")
        #expect(account.privateKeyId == "abc123")
        #expect(account.tokenURI.absoluteString == "https://oauth2.googleapis.com/token")
        #expect(account.projectId == "acme-prod")
    }

    @Test func eachRequiredFieldIsNamedWhenMissingOrEmpty() {
        for name in ["type", "client_email", "private_key_id", "private_key"] {
            let missing = refusal([(name, .null)])
            #expect(missing?.contains("no \"\(name)\"") == true, "\(name): \(missing ?? "accepted")")
            let empty = refusal([(name, "")])
            #expect(empty?.contains("\"\(name)\"") == true, "\(name): \(empty ?? "accepted")")
            let number = refusal([(name, 7)])
            #expect(number?.contains("\"\(name)\"") == true, "\(name): \(number ?? "accepted")")
        }
    }

    @Test func refusesWhatIsNotAServiceAccountKey() {
        #expect(refusal([("type", "authorized_user")])?.contains("not \"service_account\"") == true)
        #expect(refusal([("client_email", "not an address")])?.contains("client_email") == true)
        #expect(refusal([("private_key", "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")])?.contains("private_key") == true)
        let ecKey = try! P256PrivateKey.generate().pemString()
        #expect(refusal([("private_key", .string(ecKey))])?.contains("private_key") == true)
        #expect(refusal([("token_uri", "ftp://oauth2.googleapis.com/token")])?.contains("token_uri") == true)
        #expect(refusal([("token_uri", "http://oauth2.googleapis.com/token")])?.contains("loopback") == true)
        do {
            _ = try ServiceAccount(json: Array("[1,2]".utf8), source: "x.json")
            Issue.record("an array was taken for a service account")
        } catch {
            #expect(error.message.contains("not a JSON object"))
        }
    }

    @Test func aLoopbackTokenURIMayBePlainHTTPAndAMissingOneIsGoogles() throws {
        let loopback = try ServiceAccount(json: Self.document([("token_uri", "http://127.0.0.1:8080/token")]), source: "sa.json")
        #expect(loopback.tokenURI.absoluteString == "http://127.0.0.1:8080/token")
        let absent = try ServiceAccount(json: Self.document([("token_uri", .null)]), source: "sa.json")
        #expect(absent.tokenURI.absoluteString == ServiceAccount.defaultTokenURI)
    }

    @Test func aMissingOrHugeFileIsAConfigurationError() throws {
        let directory = try TestPaths.makeTemporaryDirectory("storerelay-sa")
        let missing = directory.appendingPathComponent("absent.json").path
        #expect(throws: PlayAPIError.self) { try ServiceAccount.load(missing) }
        let huge = directory.appendingPathComponent("huge.json").path
        try Data(repeating: 0x20, count: ServiceAccount.maxFileSize + 1).write(to: URL(fileURLWithPath: huge))
        do {
            _ = try ServiceAccount.load(huge)
            Issue.record("a huge file was read")
        } catch {
            #expect(error.message.contains("too large"))
        }
    }
}
