import Dispatch
import StoreRelayCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What the outbound connections of one client share: the one injectable resolver (behind a
/// serial queue per host name) and one TLS client context per trust and identity.
///
/// Loading a CA store costs milliseconds and a context may serve any number of connections at
/// once, so each is built on first use and kept. A context remembers the size and change time
/// of the files it read and is rebuilt when they change: a CA bundle or a client certificate
/// rotated on disk is taken up by the next connection, without a reload.
public final class OutboundConnector: Sendable {
    let resolvers: ResolverQueues

    private struct Cached {
        var context: TLSContext
        var files: [FileStamp?]
    }
    private let contexts = Locked<[TLSClientIdentity: Cached]>([:])

    public init(resolver: any HostResolver = SystemHostResolver()) {
        resolvers = ResolverQueues(resolver: resolver)
    }

    /// The client context for `identity`. A failure is not kept: the next connection tries
    /// again (the operator may have fixed the file).
    func tlsContext(for identity: TLSClientIdentity) throws(TLSError) -> TLSContext {
        let files = identity.files.map(FileStamp.init(path:))
        if let cached = contexts.withLock({ $0[identity] }), cached.files == files { return cached.context }
        let context = try TLSContext(
            clientTrustingExtraCAFile: identity.caFile, certificateChainFile: identity.certificateChainFile,
            privateKeyFile: identity.privateKeyFile)
        contexts.withLock { $0[identity] = Cached(context: context, files: files) }
        return context
    }

    /// How many identities have a context (tests: equal identities share one).
    var tlsContextCount: Int { contexts.withLock { $0.count } }
}

extension TLSClientIdentity {
    /// The files a context for this identity reads, in a fixed order.
    fileprivate var files: [String?] { [caFile, certificateChainFile, privateKeyFile] }
}

/// Enough of a file's `stat` to notice that it was replaced or rewritten.
private struct FileStamp: Equatable {
    var size: Int
    var seconds: Int
    var nanoseconds: Int
    var inode: UInt64

    /// nil for no file, or one that cannot be read (the context build then says why).
    init?(path: String?) {
        guard let path else { return nil }
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        size = Int(status.st_size)
        seconds = Int(status.st_mtim.tv_sec)
        nanoseconds = Int(status.st_mtim.tv_nsec)
        inode = UInt64(status.st_ino)
    }
}
