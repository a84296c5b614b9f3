#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import StoreRelayCore

/// A segment mapped read-only for recovery to scan in place. Reading it into a fresh array
/// cost more than scanning it (allocating and faulting in up to 64 MiB, about a millisecond
/// per MiB); the mapping shares the page cache's pages. Recovery runs before anything else
/// touches the directory, so nothing truncates the file while it is mapped.
final class MappedSegment {
    let count: Int
    private let base: UnsafeMutableRawPointer?

    init(path: String) throws(StorageError) {
        let fd = try JournalFiles.openFile(path, O_RDONLY)
        defer { closeDescriptor(fd) }
        count = try JournalFiles.status(fd, path: path).size
        guard count > 0 else {
            base = nil
            return
        }
        #if canImport(Glibc)
        let flags = MAP_PRIVATE | MAP_POPULATE
        #else
        let flags = MAP_PRIVATE
        #endif
        guard let mapped = mmap(nil, count, PROT_READ, flags, fd, 0), mapped != MAP_FAILED else {
            throw StorageError(.io, operation: "mmap", errno: errno, path: path, message: "cannot map \(path): \(String(cString: strerror(errno)))")
        }
        base = mapped
    }

    deinit {
        if let base { munmap(base, count) }
    }

    func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws(StorageError) -> Result) throws(StorageError) -> Result {
        try body(UnsafeRawBufferPointer(start: base, count: count))
    }
}
