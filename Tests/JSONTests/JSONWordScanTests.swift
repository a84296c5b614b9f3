import Testing
@testable import StoreRelayCore

/// The string scanners skip eight bytes at a time; these put every kind of byte that needs
/// attention at every offset of a word (and across word boundaries) and compare with a plain
/// byte-at-a-time reference.
@Suite("JSON word-at-a-time scanning")
struct JSONWordScanTests {
    /// What `serializeString` must produce, one scalar at a time.
    static func referenceEscape(_ string: String) -> String {
        var out = "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{2028}": out += "\\u2028"
            case "\u{2029}": out += "\\u2029"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    static let specials: [String] = ["\"", "\\", "\n", "\u{0}", "\u{1F}", "\u{7F}", "é", "€", "’", "\u{2028}", "\u{2029}", "😀", " "]

    @Test(arguments: specials)
    func serializesAndParsesASpecialAtEveryOffset(_ special: String) throws {
        for length in [0, 1, 7, 8, 9, 15, 16, 17, 31] {
            for offset in 0...length {
                let plain = String(repeating: "a", count: length)
                let string = String(plain.prefix(offset)) + special + String(plain.dropFirst(offset))
                let text = JSONValue.string(string).serialized()
                #expect(text == Self.referenceEscape(string), "length \(length) offset \(offset)")
                #expect(try JSONValue.parse(text).stringValue == string, "length \(length) offset \(offset)")
            }
        }
    }

    @Test func rejectsARawControlCharacterAtEveryOffsetWithItsOffset() {
        for length in [1, 8, 9, 16, 23] {
            for offset in 0..<length {
                for control: UInt8 in [0x00, 0x09, 0x0A, 0x1F] {
                    var bytes = [UInt8](repeating: UInt8(ascii: "b"), count: length)
                    bytes[offset] = control
                    let document = [UInt8(ascii: "\"")] + bytes + [UInt8(ascii: "\"")]
                    do {
                        _ = try JSONValue.parse(document)
                        Issue.record("accepted a raw control character at \(offset) of \(length)")
                    } catch {
                        #expect(error.offset == offset + 1)
                        #expect(error.reason == "control character in a string")
                    }
                }
            }
        }
    }

    @Test func rejectsInvalidUTF8AtEveryOffset() {
        for length in [1, 8, 9, 16, 23] {
            for offset in 0..<length {
                for invalid: [UInt8] in [[0xFF], [0xC3], [0x80], [0xED, 0xA0, 0x80]] {
                    var bytes = [UInt8](repeating: UInt8(ascii: "c"), count: length)
                    bytes.replaceSubrange(offset..<offset + 1, with: invalid)
                    #expect(throws: JSONError.self) { try JSONValue.parse([0x22] + bytes + [0x22]) }
                    // The same with an escape after it: the slow path validates too.
                    #expect(throws: JSONError.self) { try JSONValue.parse([0x22] + bytes + Array(#"\n""#.utf8)) }
                }
            }
        }
    }

    @Test func escapesAfterLongRunsDecode() throws {
        let run = String(repeating: "x", count: 13)
        let text = "\"" + run + #"\u00e9"# + run + #"\"\\\/"# + run + #"\ud83d\ude00"# + "\""
        #expect(try JSONValue.parse(text).stringValue == run + "é" + run + "\"\\/" + run + "😀")
    }

    @Test func unterminatedLongStringsAreRejected() {
        for length in [0, 7, 8, 9, 64] {
            let text = "\"" + String(repeating: "z", count: length)
            #expect(throws: JSONError.self) { try JSONValue.parse(text) }
            #expect(throws: JSONError.self) { try JSONValue.parse(text + "\\") }
            #expect(throws: JSONError.self) { try JSONValue.parse(text + "\\u12") }
        }
    }
}
