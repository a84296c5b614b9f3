import CFuzzOpenSSL
import FuzzSupport
import StoreRelayCrypto

/// libFuzzer target: `PublicKey.isValidES256Signature` must give OpenSSL's own verdict
/// (`EVP_DigestVerify` with a fresh context, the signature DER-encoded here, independently
/// of the library) on every signature, of any length and content.
///
/// Input: byte 0 picks one of three keys, byte 1 a way to build the signature, the next 64
/// bytes are material, the rest is the message. Random signatures are almost never valid,
/// so most ways start from a real signature of the message and disturb it: the material as
/// an XOR mask (all zeros leaves it valid), the twin (r, n − s), r or s swapped for an edge
/// value (0, 1, n − 1, n, n + 1, p − 1, p, 2²⁵⁶ − 1) or wrapped by n and p − n. Every
/// signature is also checked against another key, which must agree with OpenSSL too.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzES256Verdict(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = fuzzInput(data, size)
    guard input.count >= 2 else { return 0 }
    let keys = SigningKeys.shared
    let signer = keys.entries[Int(input[0]) % keys.entries.count]
    let other = keys.entries[(Int(input[0]) + 1) % keys.entries.count]
    var material = Array(input.dropFirst(2).prefix(64))
    material += [UInt8](repeating: 0, count: 64 - material.count)
    let message = Array(input.dropFirst(66))

    let signature = P256Edges.signature(way: input[1], material: material) {
        (try? signer.privateKey.signES256(message)) ?? []
    }
    for entry in [signer, other] {
        let ours = entry.publicKey.isValidES256Signature(signature, for: message)
        let openssl = entry.referenceVerdict(signature, message)
        fuzzCheck(ours == openssl, "key \(entry.index): StoreRelay says \(ours), OpenSSL says \(openssl) for "
            + "signature \(hex(signature)) over \(message.count) bytes (way \(input[1] % P256Edges.ways))")
    }
    return 0
}

func hex(_ bytes: [UInt8]) -> String {
    bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
}
