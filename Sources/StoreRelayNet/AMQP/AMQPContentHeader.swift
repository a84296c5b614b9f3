/// A content header's `message-id` (§4.2.6.1): what ties a Basic.Return to the publish it
/// returns, since a return carries no delivery tag. nil when the header has none or is
/// malformed.
enum AMQPContentHeader {
    static func messageId(_ payload: [UInt8]) -> String? {
        var reader = AMQPReader(payload)
        do {
            _ = try reader.short()  // class
            _ = try reader.short()  // weight
            _ = try reader.longlong()  // body size
            let flags = try reader.short()
            // Basic's properties before message-id, in order: content-type, content-encoding,
            // headers, delivery-mode, priority, correlation-id, reply-to, expiration.
            if flags & (1 << 15) != 0 { _ = try reader.shortString() }
            if flags & (1 << 14) != 0 { _ = try reader.shortString() }
            if flags & (1 << 13) != 0 { try reader.skipTable() }
            if flags & (1 << 12) != 0 { _ = try reader.octet() }
            if flags & (1 << 11) != 0 { _ = try reader.octet() }
            if flags & (1 << 10) != 0 { _ = try reader.shortString() }
            if flags & (1 << 9) != 0 { _ = try reader.shortString() }
            if flags & (1 << 8) != 0 { _ = try reader.shortString() }
            guard flags & (1 << 7) != 0 else { return nil }
            return try reader.shortString()
        } catch {
            return nil
        }
    }
}
