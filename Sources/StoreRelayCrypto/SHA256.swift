internal import COpenSSL

/// SHA-256 (FIPS 180-4) through OpenSSL's EVP interface.
public enum SHA256 {
    /// The algorithm, fetched from OpenSSL's provider store once: `EVP_sha256()` would fetch it
    /// again on every digest (about a microsecond each, three times per notification).
    /// `nonisolated(unsafe)`: a fetched `EVP_MD` is immutable and OpenSSL shares it between
    /// threads by design.
    nonisolated(unsafe) fileprivate static let algorithm: OpaquePointer = {
        guard let md = EVP_MD_fetch(nil, "SHA256", nil) else {
            fatalError("OpenSSL has no SHA-256 (\(OpenSSLErrorQueue.drain()))")
        }
        return md
    }()

    /// A running hash. Copies are independent (copy on write), so a prefix hashed once can be
    /// kept and continued many times: a JWS's header, shared by every JWS signed with the same
    /// chain.
    public struct State: Sendable {
        private var context: DigestContext

        public init() { context = DigestContext() }

        public mutating func update(_ bytes: UnsafeRawBufferPointer) {
            if !isKnownUniquelyReferenced(&context) { context = context.copy() }
            context.update(bytes)
        }

        public mutating func update(_ bytes: [UInt8]) {
            bytes.withUnsafeBytes { update($0) }
        }

        /// The digest of everything absorbed so far; the state itself can go on.
        public func digest() -> [UInt8] {
            context.copy().finish()
        }
    }

    public static func hash(_ bytes: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        let ok = bytes.withUnsafeBytes { input in
            digest.withUnsafeMutableBufferPointer { output in
                EVP_Digest(input.baseAddress, input.count, output.baseAddress, nil, algorithm, nil) == 1
            }
        }
        // Only an allocation failure makes a digest fail: there is no answer to give.
        precondition(ok, "SHA-256 failed: \(OpenSSLErrorQueue.drain())")
        return digest
    }

    /// The digest as lowercase hexadecimal.
    public static func hexHash(_ bytes: [UInt8]) -> String {
        hex(hash(bytes))
    }

    public static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0xF)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// The one owner of an `EVP_MD_CTX` running SHA-256, freed in `deinit`.
///
/// `@unchecked Sendable`: `SHA256.State` mutates a context only while it holds the sole
/// reference; shared contexts are only read (`EVP_MD_CTX_copy_ex` reads its source), which
/// OpenSSL allows from several threads at once.
private final class DigestContext: @unchecked Sendable {
    private let pointer: OpaquePointer

    init() {
        pointer = DigestContext.newContext()
        guard EVP_DigestInit_ex2(pointer, SHA256.algorithm, nil) == 1 else {
            fatalError("SHA-256 could not start: \(OpenSSLErrorQueue.drain())")
        }
    }

    private init(copying source: OpaquePointer) {
        pointer = DigestContext.newContext()
        guard EVP_MD_CTX_copy_ex(pointer, source) == 1 else {
            fatalError("SHA-256 state could not be copied: \(OpenSSLErrorQueue.drain())")
        }
    }

    deinit { EVP_MD_CTX_free(pointer) }

    private static func newContext() -> OpaquePointer {
        guard let context = EVP_MD_CTX_new() else { fatalError("out of memory for a SHA-256 context") }
        return context
    }

    func copy() -> DigestContext { DigestContext(copying: pointer) }

    func update(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else { return }
        guard EVP_DigestUpdate(pointer, bytes.baseAddress, bytes.count) == 1 else {
            fatalError("SHA-256 update failed: \(OpenSSLErrorQueue.drain())")
        }
    }

    /// The digest; this context is spent afterwards.
    func finish() -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        let ok = digest.withUnsafeMutableBufferPointer { EVP_DigestFinal_ex(pointer, $0.baseAddress, nil) == 1 }
        guard ok else { fatalError("SHA-256 could not finish: \(OpenSSLErrorQueue.drain())") }
        return digest
    }
}
