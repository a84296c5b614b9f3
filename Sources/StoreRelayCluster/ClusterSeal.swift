import StoreRelayCrypto
import StoreRelayCore

/// `cluster-key` at work (docs/SPEC.md "Cluster mode", Integrity): every record an instance
/// writes to the server carries an HMAC-SHA256 under the key, and every record an instance
/// acts on is checked first. Whoever can write to the server can then delete or hold back
/// records, but not make an instance deliver, replay or show something no instance wrote.
///
/// A sealed record is `sr1.` + 64 hex digits (the MAC) + `.` + the record as before. The MAC
/// covers the record's kind and the names of the key (and hash field) it was written under,
/// each length-prefixed: a genuine record copied under another event id, destination or
/// dead-letter id no longer checks out.
///
/// Without a key (`cluster-key` absent) records are written as before and read unchecked (a
/// sealed one without its seal). Turning the key on while records written without it are in
/// flight: `cluster-key KEY unsealed` accepts those too until the word is removed.
public struct ClusterSeal: Sendable {
    /// What a record is; part of what its MAC covers.
    public enum Kind: String, Sendable {
        /// `event:<id>`: the stored notification.
        case event
        /// A field of `state:<id>`: one destination's delivery state of the event.
        case state
        /// A field of `progress:<destination>`: one event's attempts and budget there.
        case progress
        /// A field of `letters`: one dead letter.
        case letter
        /// A field of `inbox`: a notification acknowledged and not yet stored.
        case inbox
    }

    /// What `open` found.
    public enum Opened: Sendable, Equatable {
        /// The record as written (its seal checked, or none expected).
        case intact([UInt8])
        /// A key is set but the record carries no seal: not written by an instance with it.
        case unsealed
        /// A seal that no configured key made: changed or moved on the server.
        case forged

        /// Why a record failed, for logs and dead letters; nil when intact.
        public var failure: String? {
            switch self {
            case .intact: nil
            case .unsealed: "it carries no seal"
            case .forged: "its seal does not match"
            }
        }
    }

    static let marker = Array("sr1.".utf8)
    private static let context = Array("storerelay cluster record 1".utf8)
    /// `sr1.` + 64 hex + `.`
    static let headerLength = marker.count + 64 + 1

    /// The keys: the first seals, any of them opens (the others are being rotated out).
    private let keys: [[UInt8]]
    /// Records without a seal still count as intact: the key is being turned on.
    private let acceptsUnsealed: Bool

    /// No key: records are neither sealed nor checked.
    public static let off = ClusterSeal(keys: [])

    /// - Parameters:
    ///   - keys: `cluster-key`'s keys, the current one first; none turns sealing off.
    ///   - acceptsUnsealed: `cluster-key ... unsealed`: records written before the key was
    ///     set are still acted on.
    public init(keys: [String], acceptsUnsealed: Bool = false) {
        self.keys = keys.map { Array($0.utf8) }
        self.acceptsUnsealed = acceptsUnsealed
    }

    /// Whether records are sealed and checked.
    public var isOn: Bool { !keys.isEmpty }

    /// `cluster-key ... unsealed`: records without a seal are still acted on.
    public var isAcceptingUnsealed: Bool { isOn && acceptsUnsealed }

    /// `stored` sealed under `names`, when it is a record without a seal that counts as
    /// intact only while `unsealed` is set; nil for any other. Sealed in place, such a
    /// record still checks out once `unsealed` is dropped.
    func resealed(_ stored: [UInt8], _ kind: Kind, _ names: [String]) -> [UInt8]? {
        guard isAcceptingUnsealed, Self.header(of: stored) == nil else { return nil }
        return seal(stored, kind, names)
    }

    /// `payload` as it is stored under `names` (the key's id, then the hash field, if any).
    public func seal(_ payload: [UInt8], _ kind: Kind, _ names: String...) -> [UInt8] {
        seal(payload, kind, names)
    }

    private func seal(_ payload: [UInt8], _ kind: Kind, _ names: [String]) -> [UInt8] {
        guard let key = keys.first else { return payload }
        let mac = HMACSHA256.authenticationCode(for: Self.message(payload, kind, names), key: key)
        return Self.marker + Array(Self.hex(mac).utf8) + [UInt8(ascii: ".")] + payload
    }

    /// The record stored under `names`, checked.
    public func open(_ stored: [UInt8], _ kind: Kind, _ names: String...) -> Opened {
        let header = Self.header(of: stored)
        guard !keys.isEmpty else { return .intact(header == nil ? stored : Array(stored.dropFirst(Self.headerLength))) }
        guard let header else { return acceptsUnsealed ? .intact(stored) : .unsealed }
        let payload = Array(stored.dropFirst(Self.headerLength))
        let message = Self.message(payload, kind, names)
        for key in keys where HMACSHA256.isValid(header, for: message, key: key) {
            return .intact(payload)
        }
        return .forged
    }

    /// The MAC a stored record carries, or nil when it has no well-formed seal.
    private static func header(of stored: [UInt8]) -> [UInt8]? {
        guard stored.count >= headerLength, stored.starts(with: marker), stored[headerLength - 1] == UInt8(ascii: ".") else { return nil }
        var mac: [UInt8] = []
        mac.reserveCapacity(32)
        var index = marker.count
        while index < headerLength - 1 {
            guard let high = hexValue(stored[index]), let low = hexValue(stored[index + 1]) else { return nil }
            mac.append(high << 4 | low)
            index += 2
        }
        return mac
    }

    /// The context, the kind and each name length-prefixed, then the payload: no two
    /// different (kind, names, payload) give the same message.
    private static func message(_ payload: [UInt8], _ kind: Kind, _ names: [String]) -> [UInt8] {
        var message = context
        for part in [kind.rawValue] + names {
            let bytes = Array(part.utf8)
            let count = UInt32(bytes.count)
            message += [UInt8(count >> 24), UInt8(count >> 16 & 0xFF), UInt8(count >> 8 & 0xFF), UInt8(count & 0xFF)]
            message += bytes
        }
        return message + payload
    }

    private static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes { out += [digits[Int(byte >> 4)], digits[Int(byte & 0xF)]] }
        return String(decoding: out, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        default: nil
        }
    }
}
