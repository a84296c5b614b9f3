import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One non-blocking socket with its read and write sources, confined to one serial queue.
///
/// Dispatch rules kept here in one place: both sources are activated at once and then switched
/// with balanced suspend/resume; a source is resumed before it is cancelled; the fd is closed
/// only in the last cancel handler, so no source ever watches a reused descriptor.
/// Both start on: the write side reports the end of a non-blocking connect.
final class SocketChannel {
    let fd: Int32
    private let queue: DispatchQueue
    private let readSource: any DispatchSourceRead
    private let writeSource: any DispatchSourceWrite
    private var reading = false
    private var writing = false
    private(set) var isClosed = false

    /// Takes ownership of `fd`. The handlers run on `queue` while the matching side is on.
    init(fd: Int32, queue: DispatchQueue, onReadable: @escaping () -> Void, onWritable: @escaping () -> Void) {
        self.fd = fd
        self.queue = queue
        readSource = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        writeSource = DispatchSource.makeWriteSource(fileDescriptor: fd, queue: queue)
        readSource.setEventHandler(handler: onReadable)
        writeSource.setEventHandler(handler: onWritable)
        let remaining = UnsafeMutablePointer<Int>.allocate(capacity: 1)
        remaining.initialize(to: 2)
        let lastCancel: () -> Void = {
            remaining.pointee -= 1
            if remaining.pointee == 0 {
                remaining.deallocate()
                _ = closeDescriptor(fd)
            }
        }
        readSource.setCancelHandler(handler: lastCancel)
        writeSource.setCancelHandler(handler: lastCancel)
        // Both sources are registered now, before the socket can hang up. Linux libdispatch
        // shares one epoll entry per descriptor and drops it on EPOLLHUP; a source first
        // registered after that never fires (swift-corelibs-libdispatch issue #833). Seen
        // here as a request that hung when the server answered and reset at once.
        readSource.resume()
        writeSource.resume()
        reading = true
        writing = true
    }

    /// Watches for readability (data, end of stream or an error).
    func setReading(_ on: Bool) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !isClosed, on != reading else { return }
        reading = on
        on ? readSource.resume() : readSource.suspend()
    }

    /// Watches for writability; leave it off when nothing waits to be sent, or it spins.
    func setWriting(_ on: Bool) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !isClosed, on != writing else { return }
        writing = on
        on ? writeSource.resume() : writeSource.suspend()
    }

    /// Stops both sources; the last cancel handler closes the fd.
    func close() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !isClosed else { return }
        isClosed = true
        if !reading { readSource.resume() }
        if !writing { writeSource.resume() }
        readSource.cancel()
        writeSource.cancel()
    }

    /// Opens a non-blocking TCP socket for `family`, with Nagle off (requests are written whole).
    static func makeSocket(family: Int32) -> Int32 {
        #if canImport(Glibc)
        let fd = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #else
        let fd = socket(family, SOCK_STREAM, 0)
        if fd >= 0 { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
        #endif
        if fd >= 0 {
            var one: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        }
        return fd
    }
}

/// `close(2)`, named apart from the methods called `close` in this module.
func closeDescriptor(_ fd: Int32) -> Int32 {
    #if canImport(Glibc)
    Glibc.close(fd)
    #else
    Darwin.close(fd)
    #endif
}
