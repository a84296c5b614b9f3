import Foundation
import StoreRelayVerification
import StoreRelayCore
import StoreRelayTestSupport
import Testing

/// Reads the shared test vectors at run time (they are never copied into the repository),
/// from `TestPaths.vectors`.
enum Vectors {
    static let directory: URL? = TestPaths.vectors

    static var available: Bool { directory != nil }
    static let skipMessage: Comment = "test vectors not found at ../shared/vectors (set STORERELAY_VECTORS)"

    struct Missing: Error {}

    static func bytes(_ relativePath: String) throws -> [UInt8] {
        guard let directory else { throw Missing() }
        return Array(try Data(contentsOf: directory.appendingPathComponent(relativePath)))
    }

    static func json(_ relativePath: String) throws -> JSONValue {
        try JSONValue.parse(bytes(relativePath))
    }

    static func files(in relativeDirectory: String) throws -> [String] {
        guard let directory else { throw Missing() }
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent(relativeDirectory).path)
        return names.sorted().map { relativeDirectory + "/" + $0 }
    }

    /// The manifest entry of `file`.
    static func manifestEntry(_ file: String) throws -> JSONValue? {
        try json("manifest.json")["vectors"]?.arrayValue?.first { $0["file"]?.stringValue == file }
    }
}

/// Decodes JWS segments without verifying them: this module's input is already verified.
enum JWS {
    struct Malformed: Error {}

    static func base64URLDecode(_ text: Substring) -> [UInt8]? {
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while standard.count % 4 != 0 { standard += "=" }
        return Data(base64Encoded: standard).map(Array.init)
    }

    static func payload(_ jws: String) throws -> JSONValue {
        let segments = jws.split(separator: ".", omittingEmptySubsequences: false)
        guard segments.count == 3, let bytes = base64URLDecode(segments[1]) else { throw Malformed() }
        return try JSONValue.parse(bytes)
    }

    /// What the verifier would hand over for this signedPayload, nested JWS decoded too.
    static func content(ofNotification jws: String) throws -> NotificationContent {
        guard let payload = try payload(jws).objectValue else { throw Malformed() }
        let data = payload["data"]
        let transaction = try data?["signedTransactionInfo"]?.stringValue.map(Self.payload)
        let renewal = try data?["signedRenewalInfo"]?.stringValue.map(Self.payload)
        let appTransaction = try payload["appData"]?["signedAppTransactionInfo"]?.stringValue.map(Self.payload)
        guard let content = NotificationContent(payload: payload, transaction: transaction, renewal: renewal,
                                                appTransaction: appTransaction) else { throw Malformed() }
        return content
    }
}

/// A fixed reception time, so every expected `receivedAt` is known.
let fixedReceipt = Timestamp(milliseconds: 1_790_000_000_123)
