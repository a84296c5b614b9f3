internal import CZlib

/// One zlib deflate stream producing the gzip format (RFC 1952), as `gzip -d` reads it.
///
/// The single Swift owner of its `z_stream`: zlib keeps pointers into the struct after
/// `deflateInit2_`, so it lives on the heap and never moves; `deinit` ends it. Not
/// thread-safe: used on the compression queue only.
final class GzipDeflater {
    private let stream: UnsafeMutablePointer<z_stream>
    private var chunk = [UInt8](repeating: 0, count: 64 * 1024)

    /// windowBits 15 + 16 asks zlib for a gzip header and trailer instead of zlib's own.
    init(level: Int32) throws(StorageError) {
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        // `deflateInit2` is a macro; the real function also takes the header's version and
        // struct size so zlib can refuse a mismatched build.
        let rc = deflateInit2_(stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY,
                               ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        guard rc == Z_OK else {
            stream.deinitialize(count: 1)
            stream.deallocate()
            throw StorageError(.compression, message: "zlib deflateInit2 failed with code \(rc)")
        }
    }

    deinit {
        deflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// Feeds `input` to the stream and hands every produced chunk to `output`; with
    /// `finish`, also writes the gzip trailer. All input is consumed before it returns.
    func deflate(_ input: UnsafeRawBufferPointer, finish: Bool,
                 output: (UnsafeRawBufferPointer) throws(StorageError) -> Void) throws(StorageError) {
        let base = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
        stream.pointee.next_in = base
        stream.pointee.avail_in = uInt(input.count)
        defer { stream.pointee.next_in = nil; stream.pointee.avail_in = 0 }
        let flush = finish ? Z_FINISH : Z_NO_FLUSH
        while true {
            let (rc, produced) = chunk.withUnsafeMutableBytes { buffer in
                stream.pointee.next_out = buffer.baseAddress!.assumingMemoryBound(to: Bytef.self)
                stream.pointee.avail_out = uInt(buffer.count)
                let rc = CZlib.deflate(stream, flush)
                return (rc, buffer.count - Int(stream.pointee.avail_out))
            }
            stream.pointee.next_out = nil
            guard rc == Z_OK || rc == Z_STREAM_END || rc == Z_BUF_ERROR else {
                throw StorageError(.compression, message: "zlib deflate failed with code \(rc)")
            }
            if produced > 0 {
                try chunk.withBytes { (bytes) throws(StorageError) in try output(UnsafeRawBufferPointer(rebasing: bytes[0..<produced])) }
            }
            if finish {
                if rc == Z_STREAM_END { return }
            } else if stream.pointee.avail_in == 0 && produced < chunk.count {
                return
            }
        }
    }
}
