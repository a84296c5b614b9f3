import Testing
import StoreRelayCore

@Suite struct Base64StrictnessTests {
    @Test func everyLengthRoundTrips() {
        var generator = SystemRandomNumberGenerator()
        for length in 0..<130 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            #expect(Base64.decode(Base64.encode(bytes)) == bytes)
            #expect(Base64.urlDecode(Base64.urlEncode(bytes)) == bytes)
            #expect(Base64.urlDecode(bytes: Array(Base64.urlEncode(bytes).utf8)[...]) == bytes)
        }
    }

    @Test func rejectsWhatIsNotCanonical() {
        #expect(Base64.urlDecode("QQ") == [0x41])
        #expect(Base64.urlDecode("QR") == nil, "non-zero pad bits")
        #expect(Base64.urlDecode("QUI") == [0x41, 0x42])
        #expect(Base64.urlDecode("QUJ") == nil, "non-zero pad bits")
        #expect(Base64.urlDecode("Q") == nil, "a final group of one symbol")
        #expect(Base64.urlDecode("QUJD=") == nil)
        #expect(Base64.decode("QUJD") == [0x41, 0x42, 0x43])
        #expect(Base64.decode("QQ==") == [0x41])
        #expect(Base64.decode("QQ=") == nil)
        #expect(Base64.decode("QQ") == nil, "standard Base64 needs its padding")
        let valid = Array(Base64.urlEncode(Array("every position is checked".utf8)).utf8)
        for position in valid.indices {
            for bad in [UInt8(ascii: "+"), UInt8(ascii: "/"), UInt8(ascii: "="), UInt8(ascii: " "), 0x00, 0xC3] {
                var mutated = valid
                mutated[position] = bad
                #expect(Base64.urlDecode(bytes: mutated[...]) == nil, "byte \(bad) at \(position)")
            }
        }
    }
}
