import StoreRelayNet

/// A `HOST:PORT` to listen on: an IPv4 address, a bracketed IPv6 address or a host name,
/// parsed by the one `host:port` parser (`StoreRelayNet.HostPort`).
public typealias ListenAddress = HostPort

extension HostPort {
    /// Parses `listen` and `admin` values, with the parser's sentence as the config error.
    static func parseListen(_ text: String) throws(ConfigValueError) -> HostPort {
        do {
            return try HostPort.parse(text)
        } catch {
            throw ConfigValueError(error.description)
        }
    }

    /// Classifies a host written without brackets (a webhook URL's), as a config error.
    static func configHostKind(_ host: Substring) throws(ConfigValueError) -> HostKind {
        do {
            return try HostPort.hostKind(host)
        } catch {
            throw ConfigValueError(error.description)
        }
    }
}
