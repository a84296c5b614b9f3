internal import COpenSSL

/// Converts ECDSA P-256 signatures between the JWS form (raw `R‖S`, 32 bytes each,
/// RFC 7518 §3.4) and the DER `ECDSA-Sig-Value` that OpenSSL signs and verifies.
package enum ECDSASignature {
    static let componentSize = 32
    /// The order n of P-256, big-endian: R and S must lie in [1, n − 1] (SEC 1 §4.1.4 step 1).
    private static let order: [UInt8] = [
        0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
        0xBC, 0xE6, 0xFA, 0xAD, 0xA7, 0x17, 0x9E, 0x84, 0xF3, 0xB9, 0xCA, 0xC2, 0xFC, 0x63, 0x25, 0x51,
    ]

    /// Whether `raw` has the shape of a P-256 signature: 64 bytes, R and S each in [1, n − 1].
    /// A cheap filter before costlier work (a chain build, a DER conversion); it decides no
    /// signature valid: OpenSSL still does, and rejects the same out-of-range values.
    package static func isWellFormedRaw(_ raw: [UInt8]) -> Bool {
        guard raw.count == 2 * componentSize else { return false }
        func inRange(_ component: ArraySlice<UInt8>) -> Bool {
            component.contains { $0 != 0 } && component.lexicographicallyPrecedes(order)
        }
        return inRange(raw[0..<componentSize]) && inRange(raw[componentSize...])
    }

    /// DER from raw `R‖S`; `nil` unless exactly 64 bytes.
    static func der(fromRaw raw: [UInt8]) -> [UInt8]? {
        guard raw.count == 2 * componentSize, let signature = ECDSA_SIG_new() else { return nil }
        defer { ECDSA_SIG_free(signature) }
        let r = raw.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, Int32(componentSize), nil) }
        let s = raw.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress! + componentSize, Int32(componentSize), nil) }
        guard let r, let s else {
            BN_free(r); BN_free(s)
            OpenSSLErrorQueue.clear()
            return nil
        }
        // set0 takes ownership of both numbers: freed with the signature.
        guard ECDSA_SIG_set0(signature, r, s) == 1 else {
            BN_free(r); BN_free(s)
            OpenSSLErrorQueue.clear()
            return nil
        }
        let length = i2d_ECDSA_SIG(signature, nil)
        guard length > 0 else { OpenSSLErrorQueue.clear(); return nil }
        var der = [UInt8](repeating: 0, count: Int(length))
        let written = der.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor = buffer.baseAddress
            return i2d_ECDSA_SIG(signature, &cursor)
        }
        return written == length ? der : nil
    }

    /// Raw `R‖S` from DER; `nil` for anything that is not one complete `ECDSA-Sig-Value`
    /// whose numbers fit in 32 bytes.
    static func raw(fromDER der: [UInt8]) -> [UInt8]? {
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            guard let start = buffer.baseAddress, buffer.count > 0 else { return nil }
            var cursor: UnsafePointer<UInt8>? = start
            guard let signature = d2i_ECDSA_SIG(nil, &cursor, buffer.count) else { return nil }
            if cursor.map({ $0 - start }) != buffer.count { ECDSA_SIG_free(signature); return nil }
            return signature
        }
        guard let parsed else { OpenSSLErrorQueue.clear(); return nil }
        defer { ECDSA_SIG_free(parsed) }
        var raw = [UInt8](repeating: 0, count: 2 * componentSize)
        let ok = raw.withUnsafeMutableBufferPointer { buffer -> Bool in
            // BN_bn2binpad left-pads with zeros and fails when the number is too long.
            BN_bn2binpad(ECDSA_SIG_get0_r(parsed), buffer.baseAddress, Int32(componentSize)) == Int32(componentSize)
                && BN_bn2binpad(ECDSA_SIG_get0_s(parsed), buffer.baseAddress! + componentSize, Int32(componentSize)) == Int32(componentSize)
        }
        if !ok { OpenSSLErrorQueue.clear() }
        return ok ? raw : nil
    }
}
