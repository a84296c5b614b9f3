import Foundation

extension RedisServerProcess {
    /// Kills the server and starts it again on the same port with nothing on disk: what a
    /// server restarted without its append-only file (or a new one in its place) looks like.
    public func restartEmpty() throws {
        stop()
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        for name in names where name != "redis.log" {
            try FileManager.default.removeItem(at: directory.appendingPathComponent(name))
        }
        try restart()
    }
}
