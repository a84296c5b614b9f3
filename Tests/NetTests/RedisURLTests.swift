import StoreRelayNet
import Testing

@Suite struct RedisURLTests {
    @Test func parsesEveryPart() throws {
        let plain = try RedisURL.parse("redis://cache.internal")
        #expect(!plain.usesTLS && plain.host == "cache.internal" && plain.port == 6379 && plain.database == 0)
        #expect(plain.user == nil && plain.password == nil)
        let full = try RedisURL.parse("rediss://relay:p%40ss%3Aw0rd@10.0.0.5:6380/3")
        #expect(full.usesTLS && full.host == "10.0.0.5" && full.port == 6380 && full.database == 3)
        #expect(full.user == "relay" && full.password == "p@ss:w0rd")
        #expect(full.description == "rediss://relay:***@10.0.0.5:6380/3", "never the password")
        let passwordOnly = try RedisURL.parse("redis://:secret@[::1]:7000/")
        #expect(passwordOnly.user == nil && passwordOnly.password == "secret" && passwordOnly.hostKind == .ipv6)
        #expect(try RedisURL.parse("redis://secret@h:1").password == "secret", "redis-cli's reading")
    }

    @Test(arguments: [
        "http://h:6379", "redis:/h", "redis://", "redis://h:0", "redis://h:99999", "redis://h/x", "redis://h/-1",
        "redis://u:%zz@h", "redis://::1:6379", "redis://h:6379/123456",
    ])
    func refusesMalformedURLs(_ text: String) {
        #expect(throws: AddressError.self) { try RedisURL.parse(text) }
    }

    @Test func errorsNeverEchoThePassword() {
        do {
            _ = try RedisURL.parse("redis:/user:hunter2@h")
            Issue.record("accepted")
        } catch {
            #expect(!error.description.contains("hunter2"))
        }
    }
}
