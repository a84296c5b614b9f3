#if canImport(Glibc)
import Glibc
#endif

/// One keep-alive client connection of the load generator: sends one pre-built request at a
/// time and hands the answer back, on the event loop's thread only.
final class LoadConnection: EventHandler {
    let fd: Int32
    private unowned let generator: LoadGenerator
    private unowned let loop: EventLoop
    private var framer = HTTPMessageFramer()
    private(set) var index = -1
    private var request: [UInt8] = []
    private var written = 0
    private var wantsWrite = false
    private var buffer = [UInt8](repeating: 0, count: 65_536)

    init(fd: Int32, generator: LoadGenerator, loop: EventLoop) {
        self.fd = fd
        self.generator = generator
        self.loop = loop
        loop.add(fd, EventLoop.readable | EventLoop.hangup, self)
    }

    var isIdle: Bool { index < 0 }

    func send(index: Int, request: [UInt8]) {
        self.index = index
        self.request = request
        written = 0
        flush()
    }

    private func flush() {
        while written < request.count {
            let count = request.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + written, $0.count - written, Int32(MSG_NOSIGNAL)) }
            if count > 0 {
                written += count
            } else if count < 0, errno == EAGAIN || errno == EINTR {
                if !wantsWrite {
                    wantsWrite = true
                    loop.modify(fd, EventLoop.readable | EventLoop.writable | EventLoop.hangup)
                }
                return
            } else {
                fail("send: \(String(cString: strerror(errno)))")
                return
            }
        }
        if wantsWrite {
            wantsWrite = false
            loop.modify(fd, EventLoop.readable | EventLoop.hangup)
        }
    }

    func handle(events: UInt32) {
        if events & EventLoop.writable != 0 { flush() }
        guard events & (EventLoop.readable | EventLoop.hangup) != 0 else { return }
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, $0.count, 0) }
            if count > 0 {
                let now = Monotonic.nanoseconds()
                buffer.withUnsafeBytes { framer.append(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
                drain(now: now)
                if count < buffer.count { return }
            } else if count < 0, errno == EAGAIN || errno == EINTR {
                return
            } else {
                fail(count == 0 ? "closed by the server" : "recv: \(String(cString: strerror(errno)))")
                return
            }
        }
    }

    private func drain(now: UInt64) {
        do {
            while let message = try framer.next() {
                guard index >= 0 else {
                    fail("an answer nobody asked for")
                    return
                }
                let finished = index
                index = -1
                request = []
                generator.completed(finished, message: message, at: now, on: self)
            }
        } catch {
            fail(error.description)
        }
    }

    private func fail(_ reason: String) {
        let lost = index
        index = -1
        loop.remove(fd)
        generator.connectionFailed(self, losing: lost, reason: reason)
    }
}
