import CBenchSys
#if canImport(Glibc)
import Glibc
#endif

/// Watches a file-queue directory (inotify) and records when each event's line appears: the
/// id is read from the line's leading `{"id":"...` and the time is when the watcher read it.
public final class FileQueueWatcher: EventHandler {
    public struct Receipt {
        public let id: String
        public let at: UInt64
    }

    private let directory: String
    private let fd: Int32
    private unowned let loop: EventLoop
    private var offsets: [String: Int] = [:]
    private var partial: [String: [UInt8]] = [:]
    public private(set) var receipts: [Receipt] = []
    private var buffer = [UInt8](repeating: 0, count: 1 << 20)

    public init(loop: EventLoop, directory: String) throws(BenchError) {
        self.directory = directory
        self.loop = loop
        fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else { throw .system("inotify_init1") }
        guard inotify_add_watch(fd, directory, UInt32(IN_MODIFY | IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE)) >= 0 else {
            throw .system("inotify_add_watch \(directory)")
        }
        loop.add(fd, EventLoop.readable, self)
        scan()
    }

    public func handle(events: UInt32) {
        var drain = [UInt8](repeating: 0, count: 4096)
        while read(fd, &drain, drain.count) > 0 {}
        scan()
    }

    /// Reads what every segment gained since the last look.
    public func scan() {
        guard let dir = opendir(directory) else { return }
        defer { closedir(dir) }
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard name.hasSuffix(".jsonl") || name.hasSuffix(".jsonl.open") else { continue }
            readNew(name)
        }
    }

    private func readNew(_ name: String) {
        let file = open(directory + "/" + name, O_RDONLY | O_CLOEXEC)
        guard file >= 0 else { return }
        defer { Glibc.close(file) }
        var offset = offsets[name] ?? 0
        while true {
            let count = buffer.withUnsafeMutableBytes { pread(file, $0.baseAddress!, $0.count, off_t(offset)) }
            guard count > 0 else { break }
            offset += count
            let now = Monotonic.nanoseconds()
            var pending = partial[name] ?? []
            pending.append(contentsOf: buffer[0..<count])
            var lineStart = 0
            for index in pending.indices where pending[index] == 10 {
                record(pending[lineStart..<index], at: now)
                lineStart = index + 1
            }
            partial[name] = Array(pending[lineStart...])
        }
        offsets[name] = offset
    }

    private func record(_ line: ArraySlice<UInt8>, at now: UInt64) {
        let prefix = Array("{\"id\":\"".utf8)
        guard line.starts(with: prefix) else { return }
        let rest = line.dropFirst(prefix.count)
        guard let quote = rest.firstIndex(of: 34) else { return }
        receipts.append(Receipt(id: String(decoding: rest[..<quote], as: UTF8.self), at: now))
    }

    public func stop() { loop.remove(fd) }
}
