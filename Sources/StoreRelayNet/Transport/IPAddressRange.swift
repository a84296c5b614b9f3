#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An IP address or a CIDR block (`10.0.0.0/8`, `192.0.2.7`, `fd00::/8`, `::1`), as routes.conf's
/// `trusted-proxy` names the proxies whose `X-Forwarded-For` is believed.
///
/// Addresses are compared as bytes, and an IPv4-mapped IPv6 address (`::ffff:10.1.2.3`, what
/// a dual-stack socket reports for an IPv4 peer) as the IPv4 address it maps, so one written
/// either way matches a peer reported either way.
public struct IPAddressRange: Sendable, Hashable, CustomStringConvertible {
    /// The network's address: 4 bytes for IPv4, 16 for IPv6; no bit set past the prefix.
    public let network: [UInt8]
    /// Leading bits that must match: 0...32 for IPv4, 0...128 for IPv6.
    public let prefixLength: Int

    /// Parses `ADDRESS` or `ADDRESS/PREFIX`. A block with bits set past its prefix
    /// (`10.0.0.1/8`) is refused rather than masked: it is a typo for an address or a block,
    /// and trusting the wrong one should not go unnoticed.
    public static func parse(_ text: String) throws(AddressError) -> IPAddressRange {
        let usage = "expected an IP address or a CIDR block such as 10.0.0.0/8 or fd00::/8"
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = bytes(of: String(parts[0])) else {
            throw AddressError("'\(parts[0])' is not an IP address (\(usage); host names are not resolved)")
        }
        let bits = address.count * 8
        var prefix = bits
        if parts.count == 2 {
            guard (1...3).contains(parts[1].utf8.count), parts[1].utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                  let value = Int(parts[1]), value <= bits
            else {
                throw AddressError("'/\(parts[1])' is not a prefix length of \(address.count == 4 ? "IPv4" : "IPv6") (expected 0 to \(bits))")
            }
            prefix = value
        }
        let range = IPAddressRange(network: masked(address, prefix), prefixLength: prefix)
        guard range.network == address else {
            throw AddressError("'\(text)' has bits set past its /\(prefix) prefix (expected \(range), or the address alone)")
        }
        return range
    }

    private init(network: [UInt8], prefixLength: Int) {
        self.network = network
        self.prefixLength = prefixLength
    }

    /// Whether `address` (an IP address as text) lies in the range; false for anything that
    /// is not an IP address.
    public func contains(_ address: String) -> Bool {
        guard let bytes = Self.bytes(of: address), bytes.count == network.count else { return false }
        return Self.masked(bytes, prefixLength) == network
    }

    /// `10.0.0.0/8`, or the address alone for a single one.
    public var description: String {
        let text = Self.text(of: network)
        return prefixLength == network.count * 8 ? text : "\(text)/\(prefixLength)"
    }

    /// The bytes of an IPv4 or IPv6 address written as text (no zone, no brackets), an
    /// IPv4-mapped IPv6 address as its 4 IPv4 bytes; nil for anything else.
    public static func bytes(of text: String) -> [UInt8]? {
        guard !text.isEmpty, text.utf8.count <= 45 else { return nil }
        if HostPort.isIPv4(Substring(text)) {
            var v4 = in_addr()
            guard inet_pton(AF_INET, text, &v4) == 1 else { return nil }
            return withUnsafeBytes(of: &v4) { Array($0) }
        }
        guard HostPort.isIPv6(Substring(text)) else { return nil }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, text, &v6) == 1 else { return nil }
        let bytes = withUnsafeBytes(of: &v6) { Array($0) }
        let mapped: [UInt8] = Array(repeating: 0, count: 10) + [0xff, 0xff]
        return Array(bytes.prefix(12)) == mapped ? Array(bytes.suffix(4)) : bytes
    }

    private static func masked(_ bytes: [UInt8], _ prefix: Int) -> [UInt8] {
        bytes.enumerated().map { index, byte in
            let kept = min(8, max(0, prefix - index * 8))
            return kept == 8 ? byte : byte & ~(0xff >> UInt8(kept))
        }
    }

    private static func text(of bytes: [UInt8]) -> String {
        let family = bytes.count == 4 ? AF_INET : AF_INET6
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let written = bytes.withUnsafeBytes { raw in inet_ntop(family, raw.baseAddress, &buffer, socklen_t(buffer.count)) }
        guard written != nil else { return bytes.map(String.init).joined(separator: ".") }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
