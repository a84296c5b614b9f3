import Foundation
import StoreRelayCore

/// The shared App Store test vectors (`../shared/vectors`), read at run time, never copied.
/// Only tests whose subject is Apple's own vectors use them; they are gated with
/// `.enabled(if: Vectors.available, ...)` so that a clone without them reports them skipped.
public enum Vectors {
    /// Whether `../shared/vectors` (or `STORERELAY_VECTORS`) is there.
    public static var available: Bool { TestPaths.vectors != nil }

    /// Why a vector test was skipped, for `.enabled(if:)`.
    public static let skipMessage = "Apple's real test vectors are absent (../shared/vectors, or set STORERELAY_VECTORS): skipped"

    /// The text of `relativePath` under the vectors directory, or nil when vectors are absent.
    public static func text(_ relativePath: String) -> String? {
        guard let root = TestPaths.vectors else { return nil }
        return try? String(contentsOf: root.appendingPathComponent(relativePath), encoding: .utf8)
    }

    /// Relative paths of the files in `directory` (for example `real/v2-notifications`), sorted.
    public static func files(in directory: String) -> [String] {
        guard let root = TestPaths.vectors else { return [] }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent(directory).path)) ?? []
        return names.sorted().map { directory + "/" + $0 }
    }

    /// The first real V2 notification whose file name contains `fragment`.
    public static func realNotification(_ fragment: String) -> String? {
        files(in: "real/v2-notifications").first { $0.contains(fragment) }.flatMap { text($0) }
    }

    /// manifest.json's entry for `relativePath`.
    public static func manifestEntry(_ relativePath: String) -> JSONValue? {
        guard let manifest = text("manifest.json"), let json = try? JSONValue.parse(manifest) else { return nil }
        return json["vectors"]?.arrayValue?.first { $0["file"]?.stringValue == relativePath }
    }
}
