import StoreRelayNet

/// The URL a webhook destination posts to: the one URL parser (`StoreRelayNet.HTTPURL`), so
/// the configuration accepts exactly what the HTTP client can send to.
public typealias WebhookURL = HTTPURL

extension HTTPURL {
    /// Parses a destination's URL, with the parser's sentence as the config error.
    static func parseWebhook(_ text: String) throws(ConfigValueError) -> HTTPURL {
        do {
            return try HTTPURL.parse(text)
        } catch {
            throw ConfigValueError(error.description)
        }
    }
}
