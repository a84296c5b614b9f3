import StoreRelayVerification
import StoreRelayCore
import StoreRelayTestSupport
import Testing

/// Seeded mutation fuzzing of V1 bodies: whatever arrives, parsing either throws an
/// `EventError` or yields an event with the full schema and no password. A crash fails the run.
@Suite("V1 fuzz")
struct V1FuzzTests {
    static var seeds: [JSONObject] {
        var seeds = [
            V1Bodies.body(type: "DID_CHANGE_RENEWAL_STATUS", top: [("auto_renew_status", "false")]),
            V1Bodies.body(type: "DID_FAIL_TO_RENEW", pending: [V1Bodies.pending(extra: [
                ("grace_period_expires_date_ms", "1606300000000"), ("price_consent_status", "1"),
            ])]),
        ]
        if var real = try? Vectors.json(V1NotificationTests.realFile).objectValue,
           var receipt = real["unified_receipt"]?.objectValue,
           let entries = receipt["latest_receipt_info"]?.arrayValue {
            // Six of its 54 entries keep each iteration cheap and still give the choice of
            // the newest entry something to do.
            receipt["latest_receipt_info"] = .array(Array(entries.prefix(6)))
            real["unified_receipt"] = .object(receipt)
            real["password"] = .string(V1Bodies.secret)
            seeds.append(real)
        }
        return seeds
    }

    /// Values a field might be replaced with, of every JSON type; never the secret.
    static let pool: [JSONValue] = [
        nil, true, false, 0, -1, 1_606_292_762_000, .number(JSONNumber(text: "1e400")!),
        .number(JSONNumber(text: "-1.5")!), "", "1", "0", "true", "false", "PROD", "Sandbox", "DID_RECOVER",
        "9223372036854775808", "-62135769600000", "1606292762000.9999", [], [nil], ["a": 1], "\u{0}\u{FFFF}",
    ]

    @Test func structuralMutationsNeverCrashOrLeak() throws {
        var rng = SeededGenerator(seed: 0x5EED_0001)
        for seed in Self.seeds {
            for _ in 0..<1000 {
                let mutated = mutate(.object(seed), rng: &rng, depth: 0)
                guard case .object(var object) = mutated else { continue }
                object["password"] = .string(V1Bodies.secret)  // the secret is always there to leak
                check(V1Bodies.bytes(object), secret: V1Bodies.secret)
            }
        }
    }

    @Test func byteMutationsNeverCrash() {
        var rng = SeededGenerator(seed: 0x5EED_0002)
        for seed in Self.seeds {
            let original = V1Bodies.bytes(seed)
            for _ in 0..<1000 {
                var bytes = original
                for _ in 0..<Int.random(in: 1...8, using: &rng) {
                    guard !bytes.isEmpty else { break }
                    let at = Int.random(in: 0..<bytes.count, using: &rng)
                    switch Int.random(in: 0..<5, using: &rng) {
                    case 0: bytes[at] = UInt8.random(in: 0...255, using: &rng)
                    case 1: bytes.remove(at: at)
                    case 2: bytes.insert(Array("{}[]\",:0-.e\\u".utf8).randomElement(using: &rng)!, at: at)
                    case 3: bytes.removeSubrange(at..<bytes.count)
                    default:
                        let end = min(bytes.count, at + Int.random(in: 1...64, using: &rng))
                        bytes.insert(contentsOf: bytes[at..<end], at: at)
                    }
                }
                check(bytes, secret: nil)
            }
        }
    }

    private func check(_ bytes: [UInt8], secret: String?) {
        let v1: V1Notification
        do {
            v1 = try V1Notification.parse(bytes)
        } catch {
            return  // a typed rejection is a fine answer to garbage
        }
        let event = v1.normalized(receivedAt: fixedReceipt)
        #expect(event.json.keys == NormalizedEvent.keys)
        #expect(event.legacyType == v1.notificationType)
        let withRaw = event.jsonBytes(includingRaw: bytes)
        #expect((try? JSONValue.parse(withRaw)) != nil)
        if let secret {
            #expect(!String(decoding: withRaw, as: UTF8.self).contains(secret))
        }
    }

    private func mutate(_ value: JSONValue, rng: inout SeededGenerator, depth: Int) -> JSONValue {
        if depth > 0, Int.random(in: 0..<8, using: &rng) == 0 {
            return Self.pool.randomElement(using: &rng)!
        }
        switch value {
        case .object(var object):
            for key in object.keys where Int.random(in: 0..<3, using: &rng) == 0 {
                switch Int.random(in: 0..<3, using: &rng) {
                case 0: object[key] = nil
                case 1: object[key] = Self.pool.randomElement(using: &rng)!
                default: object[key] = mutate(object[key]!, rng: &rng, depth: depth + 1)
                }
            }
            return .object(object)
        case .array(var elements):
            if !elements.isEmpty, Int.random(in: 0..<4, using: &rng) == 0 {
                elements.shuffle(using: &rng)
                elements.removeLast()
            }
            return .array(elements.map { mutate($0, rng: &rng, depth: depth + 1) })
        default:
            return value
        }
    }
}
