#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension HTTPResponse {
    /// Writes the response as HTTP/1.1 bytes, framing it the way the connection needs.
    ///
    /// - `Content-Length` is always the body's length (RFC 9112 §6.3: the one framing we use),
    ///   except for 1xx, 204 and 304, which carry no body. `Transfer-Encoding` is dropped.
    /// - `headRequest`: the body is left out but `Content-Length` kept (RFC 9110 §9.3.2).
    /// - `close`: adds `Connection: close`; otherwise an HTTP/1.0 peer gets
    ///   `Connection: keep-alive`, since 1.0 closes by default.
    /// - Header fields with characters that could split the response are dropped.
    public func serialize(
        into buffer: inout [UInt8], headRequest: Bool = false, close: Bool = false,
        requestVersion: HTTPVersion = .http1_1, date: String = HTTPDate.now()
    ) {
        let bodyless = (100..<200).contains(status) || status == 204 || status == 304
        var head = "HTTP/1.1 \(status) \(HTTPResponse.sanitized(reason))\r\n"
        for (name, value) in headers {
            guard HTTPSyntax.isToken(name.utf8), value.utf8.allSatisfy(HTTPSyntax.isFieldValueChar) else { continue }
            if HTTPSyntax.equalsIgnoringCase(name, "Content-Length")
                || HTTPSyntax.equalsIgnoringCase(name, "Transfer-Encoding")
                || HTTPSyntax.equalsIgnoringCase(name, "Connection") {
                continue
            }
            head += name + ": " + value + "\r\n"
        }
        if !headers.contains("Date") { head += "Date: " + date + "\r\n" }
        if !bodyless { head += "Content-Length: \(body.count)\r\n" }
        if close {
            head += "Connection: close\r\n"
        } else if requestVersion == .http1_0 {
            head += "Connection: keep-alive\r\n"
        }
        head += "\r\n"
        buffer.append(contentsOf: head.utf8)
        if !headRequest && !bodyless { buffer.append(contentsOf: body) }
    }

    /// The serialized bytes; see `serialize(into:headRequest:close:requestVersion:date:)`.
    public func serialized(headRequest: Bool = false, close: Bool = false, requestVersion: HTTPVersion = .http1_1) -> [UInt8] {
        var buffer: [UInt8] = []
        serialize(into: &buffer, headRequest: headRequest, close: close, requestVersion: requestVersion)
        return buffer
    }

    private static func sanitized(_ reason: String) -> String {
        String(decoding: reason.utf8.filter(HTTPSyntax.isFieldValueChar), as: UTF8.self)
    }
}

/// The IMF-fixdate format of the `Date` header (RFC 9110 §5.6.7), e.g.
/// `Sun, 06 Nov 1994 08:49:37 GMT`.
public enum HTTPDate {
    private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    public static func now() -> String { format(secondsSinceEpoch: Int(time(nil))) }

    public static func format(secondsSinceEpoch: Int) -> String {
        var t = time_t(secondsSinceEpoch)
        var parts = tm()
        gmtime_r(&t, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }
}
