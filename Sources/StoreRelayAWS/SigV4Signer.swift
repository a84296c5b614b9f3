import StoreRelayCrypto
import StoreRelayNet
import StoreRelayCore

/// AWS Signature Version 4 for a request sent with the `Authorization` header
/// (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_sigv-create-signed-request.html):
/// a canonical request (method, path, query, the signed headers, the body's SHA-256), the
/// string to sign naming the date, region and service, and an HMAC-SHA256 chain from the
/// secret down to a key for that day, region and service. Tested against AWS's published
/// example (`get-vanilla`) and against botocore's signer for the same inputs.
public struct SigV4Signer: Sendable {
    public var credentials: AWSCredentials
    public var region: String
    public var service: String

    public init(credentials: AWSCredentials, region: String, service: String) {
        self.credentials = credentials
        self.region = region
        self.service = service
    }

    /// Adds `X-Amz-Date`, `X-Amz-Security-Token` (temporary credentials) and `Authorization`
    /// to `request`, signing every header it carries plus `Host`.
    public func sign(_ request: inout HTTPClientRequest, at time: Timestamp) {
        let amzDate = Self.amzDate(time)
        request.headers.replaceOrAdd(name: "X-Amz-Date", value: amzDate)
        if let token = credentials.sessionToken { request.headers.replaceOrAdd(name: "X-Amz-Security-Token", value: token) }
        request.headers.remove(name: "Authorization")
        request.headers.replaceOrAdd(name: "Authorization", value: authorization(for: request, amzDate: amzDate))
    }

    /// The `Authorization` value for `request` as it stands (its `X-Amz-Date` included).
    func authorization(for request: HTTPClientRequest, amzDate: String) -> String {
        let day = String(amzDate.prefix(8))
        let scope = "\(day)/\(region)/\(service)/aws4_request"
        let (canonical, signedHeaders) = canonicalRequest(request)
        let stringToSign = "AWS4-HMAC-SHA256\n\(amzDate)\n\(scope)\n" + SHA256.hexHash(Array(canonical.utf8))
        var key = Array("AWS4\(credentials.secretAccessKey)".utf8)
        for part in [day, region, service, "aws4_request"] {
            key = HMACSHA256.authenticationCode(for: Array(part.utf8), key: key)
        }
        let signature = SHA256.hex(HMACSHA256.authenticationCode(for: Array(stringToSign.utf8), key: key))
        return "AWS4-HMAC-SHA256 Credential=\(credentials.accessKeyId)/\(scope), SignedHeaders=\(signedHeaders), Signature=\(signature)"
    }

    /// The canonical request and its signed-header list.
    func canonicalRequest(_ request: HTTPClientRequest) -> (String, String) {
        let target = request.url.pathAndQuery
        let question = target.firstIndex(of: "?")
        let path = question.map { String(target[..<$0]) } ?? target
        let query = question.map { String(target[target.index(after: $0)...]) } ?? ""
        var headers: [String: [String]] = [:]
        if !request.headers.contains("Host") { headers["host"] = [request.url.hostHeader] }
        for field in request.headers { headers[field.name.lowercased(), default: []].append(Self.trimmed(field.value)) }
        let names = headers.keys.sorted()
        let canonicalHeaders = names.map { "\($0):\(headers[$0]!.joined(separator: ","))\n" }.joined()
        let signedHeaders = names.joined(separator: ";")
        let canonical = [
            request.method, Self.canonicalPath(path), Self.canonicalQuery(query), canonicalHeaders, signedHeaders,
            SHA256.hexHash(request.body),
        ].joined(separator: "\n")
        return (canonical, signedHeaders)
    }

    /// `20150830T123600Z`.
    static func amzDate(_ time: Timestamp) -> String {
        // iso8601 is `2015-08-30T12:36:00.000Z`.
        let iso = time.iso8601
        return String(iso.prefix(19).filter { $0 != "-" && $0 != ":" }) + "Z"
    }

    /// Each segment URI-encoded once more (services other than S3 sign the path as sent,
    /// encoded again); empty means `/`.
    static func canonicalPath(_ path: String) -> String {
        path.isEmpty ? "/" : uriEncode(path, keepingSlash: true)
    }

    /// Parameters sorted by name then value, each name and value URI-encoded (after decoding
    /// what the query had encoded, so that both spellings sign the same).
    static func canonicalQuery(_ query: String) -> String {
        guard !query.isEmpty else { return "" }
        let pairs = query.split(separator: "&", omittingEmptySubsequences: true).map { item -> (String, String) in
            let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = uriEncode(percentDecoded(parts[0]), keepingSlash: false)
            let value = parts.count > 1 ? uriEncode(percentDecoded(parts[1]), keepingSlash: false) : ""
            return (name, value)
        }
        return pairs.sorted { $0.0 == $1.0 ? $0.1 < $1.1 : $0.0 < $1.0 }.map { "\($0.0)=\($0.1)" }.joined(separator: "&")
    }

    /// RFC 3986 unreserved characters as they are, every other byte as `%XX` (upper case).
    static func uriEncode(_ text: String, keepingSlash: Bool) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            case UInt8(ascii: "/") where keepingSlash:
                out += "/"
            default:
                let hex = Array("0123456789ABCDEF")
                out += "%" + String(hex[Int(byte >> 4)]) + String(hex[Int(byte & 0xF)])
            }
        }
        return out
    }

    private static func percentDecoded(_ text: Substring) -> String {
        var bytes: [UInt8] = []
        let utf8 = Array(text.utf8)
        var index = 0
        while index < utf8.count {
            if utf8[index] == UInt8(ascii: "%"), index + 2 < utf8.count, let value = UInt8(String(decoding: utf8[index + 1...index + 2], as: UTF8.self), radix: 16) {
                bytes.append(value)
                index += 3
            } else {
                bytes.append(utf8[index] == UInt8(ascii: "+") ? UInt8(ascii: " ") : utf8[index])
                index += 1
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Leading and trailing spaces dropped, runs of spaces made one.
    private static func trimmed(_ value: String) -> String {
        value.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
    }
}
