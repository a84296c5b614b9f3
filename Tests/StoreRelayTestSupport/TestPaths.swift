import Foundation

/// Where tests find the package, the shared test vectors and the built `storerelay` binary.
public enum TestPaths {
    /// The package root, derived from this file's location (Tests/StoreRelayTestSupport/...).
    public static let packageRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// `../shared/vectors` beside the package, or nil in a user's own clone without it. A git
    /// worktree sits one level deeper, so `../../shared/vectors` is tried too;
    /// `STORERELAY_VECTORS` replaces both (a missing directory there also gives nil).
    public static let vectors: URL? = {
        func usable(_ url: URL) -> Bool {
            FileManager.default.fileExists(atPath: url.appendingPathComponent("manifest.json").path)
        }
        if let override = ProcessInfo.processInfo.environment["STORERELAY_VECTORS"] {
            let url = URL(fileURLWithPath: override)
            return usable(url) ? url : nil
        }
        let parent = packageRoot.deletingLastPathComponent()
        let candidates = [
            parent.appendingPathComponent("shared/vectors"),
            parent.deletingLastPathComponent().appendingPathComponent("shared/vectors"),
        ]
        return candidates.first(where: usable)
    }()

    /// The `storerelay` executable built by `swift test` next to the test bundle, or the
    /// one named by `STORERELAY_BINARY`.
    public static var binary: URL {
        if let override = ProcessInfo.processInfo.environment["STORERELAY_BINARY"] {
            return URL(fileURLWithPath: override)
        }
        let testExecutable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        var directory = testExecutable.deletingLastPathComponent()
        // On Linux the test binary is `.build/<triple>/debug/StoreRelayPackageTests.xctest`.
        for _ in 0..<3 {
            let candidate = directory.appendingPathComponent("storerelay")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return packageRoot.appendingPathComponent(".build/debug/storerelay")
    }

    /// A fresh empty directory under the system temporary directory.
    public static func makeTemporaryDirectory(_ label: String = "storerelay-test") throws -> URL {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("\(label)-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}
