import Foundation
import StoreRelayCore

/// A file the configuration names (`trust-root`, `tls`, `ca-file`, `api-key`, `client-cert`),
/// which `serve` reads at start or on first use. `storerelay check` reads each one too, so a
/// typo or a permission fails the check rather than the start.
///
/// Relative paths in routes.conf are relative to the working directory of the process, not
/// to the file's own directory: `data ./data` and the rest resolve as the shell does.
public struct ReferencedFile: Sendable, Hashable {
    /// The directive that names it, e.g. `trust-root` or `destination billing ca-file`.
    public var directive: String
    /// The path as written.
    public var path: String
    /// A private key: readable by its owner alone, as ssh requires of its keys.
    public var isPrivateKey = false
    /// `serve` creates it at start when it is missing (the dev CA of `storerelay simulate`).
    public var createdAtStart = false

    /// The path made absolute against the working directory, `.` and `..` resolved.
    public var absolutePath: String { ConfigPaths.absolute(path) }
}

public enum ConfigPaths {
    /// `path` against the working directory, standardized; an absolute path is standardized
    /// only.
    public static func absolute(_ path: String) -> String {
        let base = FileManager.default.currentDirectoryPath
        let url = path.hasPrefix("/") ? URL(fileURLWithPath: path) : URL(fileURLWithPath: base).appendingPathComponent(path)
        return url.standardizedFileURL.path
    }
}

extension TrustRoot {
    /// Whether this line names the dev CA of `storerelay simulate` under `dataDirectory`
    /// (`DATA/dev-ca/root.pem`) for environments other than production: `serve` creates that
    /// CA when it is missing, so a first run needs no edit. A line that would let the dev CA
    /// vouch for production is never provisioned: its file must exist.
    public func isProvisionedDevCA(dataDirectory: String) -> Bool {
        guard let environments, !environments.contains(.production) else { return false }
        return ConfigPaths.absolute(path) == ConfigPaths.absolute(dataDirectory + "/dev-ca/root.pem")
    }
}

extension GatewayConfiguration {
    /// Every file the configuration names, in the order of the report.
    public var referencedFiles: [ReferencedFile] {
        var files: [ReferencedFile] = []
        if let tls {
            files.append(ReferencedFile(directive: "tls", path: tls.certificateFile))
            files.append(ReferencedFile(directive: "tls", path: tls.privateKeyFile, isPrivateKey: true))
        }
        for root in trustRoots {
            files.append(ReferencedFile(directive: "trust-root", path: root.path,
                                        createdAtStart: root.isProvisionedDevCA(dataDirectory: dataDirectory)))
        }
        for app in apps {
            if let key = app.apiKey {
                files.append(ReferencedFile(directive: "app \(app.bundleId) api-key", path: key.path, isPrivateKey: true))
            }
        }
        for app in playApps {
            if let file = app.serviceAccountFile {
                files.append(ReferencedFile(directive: "play \(app.packageName) service-account", path: file, isPrivateKey: true))
            }
        }
        if let caFile = googleCerts?.caFile { files.append(ReferencedFile(directive: "google-certs-url ca-file", path: caFile)) }
        if let caFile = googleAPI?.caFile { files.append(ReferencedFile(directive: "google-api-url ca-file", path: caFile)) }
        if let caFile = appleAPI?.caFile { files.append(ReferencedFile(directive: "apple-api-url ca-file", path: caFile)) }
        if let caFile = tracing?.caFile { files.append(ReferencedFile(directive: "tracing ca-file", path: caFile)) }
        if let caFile = cluster?.caFile { files.append(ReferencedFile(directive: "cluster ca-file", path: caFile)) }
        if let identity = cluster?.clientCertificate {
            files.append(ReferencedFile(directive: "cluster client-cert", path: identity.certificateFile))
            files.append(ReferencedFile(directive: "cluster client-cert", path: identity.privateKeyFile, isPrivateKey: true))
        }
        for destination in destinations {
            let caFile: String? = switch destination.kind {
            case .webhook(let options): options.caFile
            case .redisStream(let options): options.caFile
            case .nats(let options): options.caFile
            case .amqp(let options): options.caFile
            case .sqs(let options): options.caFile
            case .file: nil
            }
            if let caFile { files.append(ReferencedFile(directive: "destination \(destination.name) ca-file", path: caFile)) }
        }
        return files
    }

    /// One sentence for each named file that cannot be read now and that `serve` will not
    /// create: what `storerelay check` fails on.
    public func unreadableFiles() -> [String] {
        referencedFiles.compactMap { file in
            if file.createdAtStart && !FileManager.default.fileExists(atPath: file.path) { return nil }
            return FileAccess.problem(reading: file.path).map { "\(file.directive) \(file.absolutePath): \($0)" }
        }
    }

    /// Private keys that others may read: ssh refuses such keys; StoreRelay warns.
    var exposedKeyWarnings: [String] {
        referencedFiles.filter(\.isPrivateKey).compactMap { file in
            var info = stat()
            guard stat(file.path, &info) == 0, info.st_mode & 0o077 != 0 else { return nil }
            let mode = String(info.st_mode & 0o777, radix: 8)
            return "\(file.directive) \(file.absolutePath) is accessible by group or others (mode \(mode)); "
                + "a private key should be readable by its owner alone: chmod 600 \(file.path)"
        }
    }
}

/// Why a file cannot be read, in a few words, or nil when it can.
enum FileAccess {
    static func problem(reading path: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else {
            return errno == ENOENT ? "no such file" : String(cString: strerror(errno))
        }
        if info.st_mode & S_IFMT == S_IFDIR { return "is a directory, not a file" }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return String(cString: strerror(errno)) }
        close(descriptor)
        return nil
    }
}
