import Testing
@testable import StoreRelayCore
import StoreRelayTestSupport

@Suite("JSON parser")
struct JSONParserTests {
    @Test func parsesEveryKindOfValue() throws {
        let value = try JSONValue.parse(#" {"a": [1, -2.5e3, true, false, null, "x"], "b": {}} "#)
        #expect(value["a"] == [1, .number(JSONNumber(text: "-2.5e3")!), true, false, nil, "x"])
        #expect(value["b"] == .object(JSONObject()))
        #expect(value["missing"] == nil)
    }

    @Test func keepsMemberOrderAndNumberText() throws {
        let text = #"{"z":1697679936711.0747,"a":1E400,"m":-0,"big":12345678901234567890}"#
        let value = try JSONValue.parse(text)
        #expect(value.objectValue?.keys == ["z", "a", "m", "big"])
        #expect(value.serialized() == text)
        #expect(value["z"]?.doubleValue == 1697679936711.0747)
        #expect(value["big"]?.int64Value == nil)
    }

    @Test func integralAccessors() throws {
        #expect(try JSONValue.parse("42").int64Value == 42)
        #expect(try JSONValue.parse("4.0").int64Value == 4)
        #expect(try JSONValue.parse("4e2").int64Value == 400)
        #expect(try JSONValue.parse("4.5").int64Value == nil)
        #expect(try JSONValue.parse("-9223372036854775808").int64Value == Int64.min)
    }

    @Test func decodesEscapes() throws {
        let value = try JSONValue.parse(#""a\"b\\c\/d\b\f\n\r\t\u00e9\ud83d\ude00""#)
        #expect(value.stringValue == "a\"b\\c/d\u{08}\u{0C}\n\r\té😀")
    }

    @Test func roundTripsStringsThatNeedEscaping() throws {
        let original = JSONValue.string("quote\" backslash\\ nl\n tab\t nul\u{0} ctl\u{1F} é 😀 € ’ \u{2028}\u{2029} </script>\u{E2}")
        let text = original.serialized()
        #expect(!text.contains("\n"))
        #expect(text.contains("\\u2028") && text.contains("\\u2029"))
        #expect(try JSONValue.parse(text) == original)
    }

    /// Readers disagree on which of two equal names wins, so a document with one is refused,
    /// at any depth, however the name is spelled (escapes decode to the same name).
    @Test(arguments: [
        #"{"a":1,"b":2,"a":3}"#, #"{"a":1,"a":1}"#, #"{"x":{"k":[],"k":null}}"#, #"[{"a":1},{"b":1,"b":2}]"#,
        #"{"signedPayload":"x","sign\u0065dPayload":"y"}"#, #"{"":1,"":2}"#,
    ])
    func refusesDuplicateMemberNames(_ text: String) {
        let error = #expect(throws: JSONError.self) { try JSONValue.parse(text) }
        #expect(error?.reason.hasPrefix("duplicate member name") == true, "\(text)")
    }

    /// Large objects check names through a set (a scan would be quadratic): duplicates are
    /// still found wherever they are, and distinct names all kept in order.
    @Test func largeObjectsStillRefuseDuplicates() throws {
        let names = (0..<2_000).map { "k\($0)" }
        let distinct = "{" + names.map { "\"\($0)\":1" }.joined(separator: ",") + "}"
        #expect(try JSONValue.parse(distinct).objectValue?.keys == names)
        for duplicate in ["k3", "k17", "k1999"] {
            let text = "{" + (names + [duplicate]).map { "\"\($0)\":1" }.joined(separator: ",") + "}"
            let error = #expect(throws: JSONError.self) { try JSONValue.parse(text) }
            #expect(error?.reason == "duplicate member name \"\(duplicate)\"")
        }
        let early = "{" + (names.prefix(20) + ["k5"]).map { "\"\($0)\":1" }.joined(separator: ",") + "}"
        #expect(throws: JSONError.self) { try JSONValue.parse(early) }
    }

    @Test func equalNamesInDifferentObjectsAreNoDuplicates() throws {
        let value = try JSONValue.parse(#"{"a":{"a":1},"b":[{"a":2},{"a":3}]}"#)
        #expect(value["a"]?["a"]?.int64Value == 1)
        let error = #expect(throws: JSONError.self) { try JSONValue.parse(#"{"a":1,  "a":2}"#) }
        #expect(error?.offset == 9)  // where the second name starts
        #expect(error?.reason == #"duplicate member name "a""#)
    }

    @Test(arguments: [
        "", " ", "{", "}", "[1,]", "{\"a\":1,}", "{a:1}", "{'a':1}", "01", "-", "1.", ".5", "1e", "+1",
        "NaN", "Infinity", "tru", "nul", "\"abc", "\"\\x\"", "\"\\u12\"", "\"\\ud800\"", "\"\\udc00\"",
        "\"\\ud800\\u0041\"", "\"a\u{01}b\"", "[1 2]", "{\"a\" 1}", "1 2", "[", "// c\n1", "[1]x",
    ])
    func rejectsInvalidDocuments(_ text: String) {
        #expect(throws: JSONError.self) { try JSONValue.parse(text) }
    }

    @Test func rejectsInvalidUTF8() {
        #expect(throws: JSONError.self) { try JSONValue.parse([0x22, 0xC3, 0x28, 0x22]) }
        #expect(throws: JSONError.self) { try JSONValue.parse([0x22, 0xFF, 0x22]) }
        #expect(throws: JSONError.self) { try JSONValue.parse([0x22, 0xED, 0xA0, 0x80, 0x22]) }
    }

    @Test func capsNesting() throws {
        let deep = String(repeating: "[", count: 65) + String(repeating: "]", count: 65)
        #expect(throws: JSONError.self) { try JSONValue.parse(deep) }
        let fine = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        _ = try JSONValue.parse(fine)
        let hostile = String(repeating: "{\"a\":", count: 100_000)
        #expect(throws: JSONError.self) { try JSONValue.parse(hostile) }
    }

    @Test func errorsCarryTheirOffset() {
        do {
            _ = try JSONValue.parse(#"{"a":1,"b":x}"#)
            Issue.record("expected an error")
        } catch {
            #expect(error.offset == 11)
        }
    }

    @Test func numberValidation() {
        #expect(JSONNumber(text: "12.5e-3") != nil)
        #expect(JSONNumber(text: "12.") == nil)
        #expect(JSONNumber(Double.nan).text == "0")
        #expect(JSONNumber(3.0).text == "3")
        #expect(JSONNumber(1.5).text == "1.5")
    }

    @Test func objectEditing() {
        var object = JSONObject()
        object["a"] = 1
        object["b"] = 2
        object["a"] = 3
        object["b"] = nil
        #expect(JSONValue.object(object).serialized() == #"{"a":3}"#)
    }

    /// Seeded mutations of valid documents: the parser must never crash, and whatever it
    /// accepts must serialize to text that parses back to the same value.
    @Test func mutationFuzz() throws {
        let seeds = [
            #"{"signedPayload":"eyJhbGciOiJFUzI1NiJ9.e30.sig","n":[1,2.5,-3e2,true,null],"s":"\u00e9\n"}"#,
            #"{"notification_type":"DID_RECOVER","unified_receipt":{"latest_receipt_info":[{"a":"1"}]}}"#,
        ].map { Array($0.utf8) }
        var rng = SeededGenerator(seed: 0x5EED)
        for _ in 0..<20_000 {
            var bytes = seeds[Int(rng.next() % UInt64(seeds.count))]
            for _ in 0..<(1 + Int(rng.next() % 4)) {
                let position = Int(rng.next() % UInt64(bytes.count + 1))
                switch rng.next() % 3 {
                case 0 where position < bytes.count: bytes[position] = UInt8(truncatingIfNeeded: rng.next())
                case 1: bytes.insert(UInt8(truncatingIfNeeded: rng.next()), at: position)
                default: if position < bytes.count { bytes.remove(at: position) }
                }
            }
            if let value = try? JSONValue.parse(bytes) {
                #expect(try JSONValue.parse(value.serializedBytes()) == value)
            }
        }
    }
}

@Suite("JSON serializer")
struct JSONSerializerTests {
    @Test func escapesExactlyWhatItMust() {
        #expect(JSONValue.string("a\"b\\c\n\u{01}€\u{2028}x").serialized() == #""a\"b\\c\n\u0001€\u2028x""#)
        #expect(JSONValue.string("").serialized() == #""""#)
        #expect(JSONValue.string("\u{2029}").serialized() == #""\u2029""#)
        #expect(JSONValue.string("plain ascii only").serialized() == #""plain ascii only""#)
    }

    /// `serializeString(utf8:)` (issue 31: bodies escaped without a String made of them)
    /// writes exactly what serializing the String does, with every escape at every offset
    /// of the eight-byte skip.
    @Test func serializingUTF8BytesMatchesSerializingTheString() {
        let specials = ["\"", "\\", "\n", "\u{0}", "\u{1F}", "\u{2028}", "\u{2029}", "\u{2026}", "é", "\u{1F600}", "/", "a"]
        var texts = ["", "plain", String(repeating: "x", count: 100)]
        for special in specials {
            for offset in 0..<17 {
                texts.append(String(repeating: "a", count: offset) + special + String(repeating: "b", count: 16 - offset % 9))
            }
        }
        for text in texts {
            var out: [UInt8] = [7]
            Array(text.utf8).withUnsafeBufferPointer { JSONValue.serializeString(utf8: $0, into: &out) }
            #expect(out == [7] + JSONValue.string(text).serializedBytes(), "\(text.debugDescription)")
        }
    }
}
