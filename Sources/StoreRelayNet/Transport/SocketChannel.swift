import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One non-blocking socket with its read and write sources, confined to one serial queue: what
/// every connection in StoreRelay (server, `OutboundConnection`) watches its socket with.
///
/// Dispatch rules kept here in one place: both sources are activated at once and then switched
/// with balanced suspend/resume; a source is resumed before it is cancelled; the fd is closed
/// only in the last cancel handler, so no source ever watches a reused descriptor. The channel
/// owns the descriptor: a `Transport` over it reads and writes but never closes it.
/// Both start on: the write side reports the end of a non-blocking connect. A connection that
/// has nothing to write turns writing off at once (on its queue, before any event can run).
public final class SocketChannel {
    public let fd: Int32
    private let queue: DispatchQueue
    private let readSource: any DispatchSourceRead
    private let writeSource: any DispatchSourceWrite
    public private(set) var reading = false
    public private(set) var writing = false
    public private(set) var isClosed = false

    /// Takes ownership of `fd`. The handlers run on `queue` while the matching side is on;
    /// `onClosed` runs there once both sources are cancelled and the descriptor is closed.
    public init(
        fd: Int32, queue: DispatchQueue, onReadable: @escaping () -> Void, onWritable: @escaping () -> Void,
        onClosed: (() -> Void)? = nil
    ) {
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
                SystemCalls.close(fd)
                onClosed?()
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
    public func setReading(_ on: Bool) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !isClosed, on != reading else { return }
        reading = on
        on ? readSource.resume() : readSource.suspend()
    }

    /// Watches for writability; leave it off when nothing waits to be sent, or it spins.
    public func setWriting(_ on: Bool) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !isClosed, on != writing else { return }
        writing = on
        on ? writeSource.resume() : writeSource.suspend()
    }

    /// Stops both sources; the last cancel handler closes the fd.
    public func close() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !isClosed else { return }
        isClosed = true
        if !reading { readSource.resume() }
        if !writing { writeSource.resume() }
        readSource.cancel()
        writeSource.cancel()
    }
}
