
extension HTTPURL {
    /// Parses `string` (see `HTTPURL.parse`), failing with the client's `.invalidRequest`.
    public init(_ string: String) throws(HTTPClientError) {
        do {
            self = try HTTPURL.parse(string)
        } catch {
            throw HTTPClientError(.invalidRequest, "invalid URL \(string.prefix(200)): \(error.description)")
        }
    }
}
