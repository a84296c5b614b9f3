import Foundation
import StoreRelayCore

/// A response as curl saw it.
public struct CurlResponse: Sendable {
    public var status: Int
    public var body: String
    public var json: JSONValue? { try? JSONValue.parse(body) }
}

/// Real HTTP requests through the `curl` command-line client.
public enum Curl {
    /// POSTs `body` to `url` and returns the status and body.
    public static func post(_ url: String, body: [UInt8], headers: [String] = []) throws -> CurlResponse {
        var arguments = ["-sS", "-X", "POST", "--data-binary", "@-", "-H", "Content-Type: application/json"]
        for header in headers { arguments += ["-H", header] }
        return try request(url, arguments: arguments, stdin: body)
    }

    public static func post(_ url: String, json: String, headers: [String] = []) throws -> CurlResponse {
        try post(url, body: Array(json.utf8), headers: headers)
    }

    /// GETs `url` (or another method with `method`).
    public static func get(_ url: String, method: String = "GET", headers: [String] = []) throws -> CurlResponse {
        var arguments = ["-sS", "-X", method]
        for header in headers { arguments += ["-H", header] }
        return try request(url, arguments: arguments, stdin: nil)
    }

    private static func request(_ url: String, arguments: [String], stdin: [UInt8]?) throws -> CurlResponse {
        let marker = "\n--storerelay-status:"
        let result = try CommandRunner.run(
            "curl", arguments + ["--max-time", "20", "-w", marker + "%{http_code}", url], stdin: stdin ?? [])
        guard let range = result.stdout.range(of: marker, options: .backwards),
              let status = Int(result.stdout[range.upperBound...])
        else {
            throw GatewayProcessError(message: "curl failed (\(result.status)): \(result.stderr)")
        }
        return CurlResponse(status: status, body: String(result.stdout[..<range.lowerBound]))
    }
}

/// Apple's HTTP body for a V2 notification: `{"signedPayload":"<JWS>"}`.
public func appleBody(signedPayload: String) -> String {
    "{\"signedPayload\":\"\(signedPayload)\"}"
}
