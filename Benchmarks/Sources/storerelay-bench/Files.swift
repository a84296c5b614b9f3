import BenchKit
import Foundation

/// File-system chores of the set-up phase (never timed).
enum Files {
    static func recreateDirectory(_ path: String) throws {
        let manager = FileManager.default
        if manager.fileExists(atPath: path) { try manager.removeItem(atPath: path) }
        try manager.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    static func write(_ path: String, _ text: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }

    static func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }

    /// The first `name` found on PATH or in the usual sbin directories, nil if absent.
    static func which(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let directories = path.split(separator: ":").map(String.init) + ["/usr/sbin", "/sbin", "/usr/local/sbin"]
        for directory in directories where FileManager.default.isExecutableFile(atPath: directory + "/" + name) {
            return directory + "/" + name
        }
        return nil
    }
}
