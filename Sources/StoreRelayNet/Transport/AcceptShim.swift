internal import CStoreRelayShims
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `accept4(fd, …, SOCK_NONBLOCK | SOCK_CLOEXEC)` on Linux, `accept` + `fcntl` elsewhere, from
/// the C shim (kept in a file of its own: the shim's import is internal).
func acceptNonBlocking(_ fd: Int32, _ address: UnsafeMutablePointer<sockaddr>, _ length: UnsafeMutablePointer<socklen_t>) -> Int32 {
    storerelay_accept4_nonblocking(fd, address, length)
}
