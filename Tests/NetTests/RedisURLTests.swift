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

    /// Issue 26: a password holding `/` was split as a database path and its tail echoed.
    @Test func aPasswordMayHoldSlashesColonsAndAts() throws {
        let url = try RedisURL.parse("redis://relay:se/cr:et@hunter2@cache.internal:6380/4")
        #expect(url.user == "relay" && url.password == "se/cr:et@hunter2" && url.host == "cache.internal")
        #expect(url.port == 6380 && url.database == 4)
        #expect(url.description == "redis://relay:***@cache.internal:6380/4")
        #expect(!String(reflecting: url).contains("hunter2"))
        var dumped = ""
        dump(url, to: &dumped)
        #expect(!dumped.contains("hunter2") && dumped.contains("<set>"), "\(dumped)")
    }

    @Test(arguments: [
        "redis://u:x/hunter2@h:99999", "redis://u:x/hunter2@h/db", "redis://u:x/hunter2@", "redis://u:x/hunter2@h:0",
        "redis://u:x/hunter2@::1:6379", "redis:/u:x/hunter2@h", "http://u:x/hunter2@h", "redis://u:x%zz/hunter2@h",
        "redis://u:hunter2@bad_host", "rediss://u:x/hunter2@h:6379/123456",
    ])
    func noErrorQuotesAnythingBeforeTheLastAt(_ text: String) {
        do {
            _ = try RedisURL.parse(text)
            Issue.record("\(text) was accepted")
        } catch {
            #expect(!error.description.contains("hunter2") && !error.description.contains("x/"), "\(error)")
        }
    }

    @Test func loopbackFollowsTheHTTPRule() throws {
        for (text, loopback) in [("redis://127.0.0.2", true), ("redis://[::1]:1", true), ("redis://LOCALHOST", true),
                                 ("redis://10.0.0.5", false), ("redis://localhost.example", false), ("redis://[::2]:1", false)] {
            #expect(try RedisURL.parse(text).isLoopback == loopback, "\(text)")
        }
    }

    @Test func theBlocksCredentialsOverrideTheURLs() throws {
        let url = try RedisURL.parse("redis://old:pass@h")
        #expect(try url.replacingCredentials(user: nil, password: "new") == RedisURL.parse("redis://old:new@h"))
        #expect(try url.replacingCredentials(user: "relay", password: nil) == RedisURL.parse("redis://relay:pass@h"))
    }
}
