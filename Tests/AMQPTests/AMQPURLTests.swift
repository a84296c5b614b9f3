@testable import StoreRelayNet
import Testing

struct AMQPURLTests {
    @Test func theVirtualHostIsPercentDecoded() throws {
        let url = try AMQPURL.parse("amqp://user:p%40ss@broker.internal:5673/%2f")
        #expect(url.user == "user" && url.password == "p@ss" && url.host == "broker.internal" && url.port == 5673)
        #expect(url.virtualHost == "/" && !url.usesTLS)
        #expect(try AMQPURL.parse("amqp://u:p@h/billing").virtualHost == "billing")
        #expect(try AMQPURL.parse("amqp://u:p@h/a%2fb").virtualHost == "a/b")
    }

    @Test func defaultsFollowRabbitMQsURISpec() throws {
        let url = try AMQPURL.parse("amqps://h")
        #expect(url.usesTLS && url.port == 5671 && url.user == "guest" && url.password == "guest" && url.virtualHost == "/")
        #expect(try AMQPURL.parse("amqp://[::1]").port == 5672)
        #expect(try AMQPURL.parse("amqp://[::1]:5600/").virtualHost == "/")
    }

    @Test func theDescriptionHidesThePassword() throws {
        let url = try AMQPURL.parse("amqp://user:secret@h:5672/a%2fb")
        #expect(url.description == "amqp://user:***@h:5672/a%2fb")
        #expect(!String(reflecting: url).contains("secret"))
    }

    @Test func malformedURLsSayWhatIsExpectedWithoutTheirSecrets() {
        for text in ["http://u:secret@h", "amqp://u:secret@h:0/", "amqp://u:sec%zzret@h", "amqp://u:secret@h/a/b", "amqp://u:secret@"] {
            do {
                _ = try AMQPURL.parse(text)
                Issue.record("\(text) parsed")
            } catch {
                #expect(!error.description.contains("secret"), "\(error)")
            }
        }
    }
}
