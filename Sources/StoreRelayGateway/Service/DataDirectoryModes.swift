#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import StoreRelayConfig
import StoreRelayCore

/// The modes of the directories under `data` that already exist at start: each is narrowed to
/// what the gateway itself would create it with. A journal, queue or dead-letter directory
/// that others can write to lets them plant, replace or remove notifications; one left so by
/// an earlier setup (a `chmod -R 777` to "fix" a volume) is tightened, and when it cannot be
/// (another user owns it) the start is refused with the reason.
enum DataDirectoryModes {
    /// Directory and the widest mode it may keep. Setgid stays allowed where groups share.
    static func expected(_ configuration: GatewayConfiguration) -> [(path: String, allowed: mode_t)] {
        let data = configuration.dataDirectory
        var directories: [(String, mode_t)] = [
            // The data directory is traversed by queue consumers of the group, never written.
            (data, 0o2755),
            (data + "/journal", 0o700),
            (data + "/dead-letters", 0o700),
            (data + "/replays", 0o700),
        ]
        for destination in configuration.destinations {
            if case .file(let options) = destination.kind { directories.append((options.directory, 0o2750)) }
        }
        return directories
    }

    static func tighten(_ configuration: GatewayConfiguration, logger: Logger) throws(GatewayError) {
        for (path, allowed) in expected(configuration) where PrivateFiles.exists(path) {
            do {
                if let was = try PrivateFiles.restrictDirectory(path, to: allowed) {
                    logger.warning("directory mode tightened: group or others had access the gateway does not grant", [
                        ("path", path), ("was", String(was, radix: 8)), ("now", String(was & allowed, radix: 8)),
                    ])
                }
            } catch {
                throw GatewayError("\(path) is writable by group or others and its mode cannot be changed (\(error)); "
                    + "run chmod go-w \(path) as its owner, or give it to the gateway's user")
            }
        }
    }
}
