import Foundation
import Testing
import StoreRelayTestSupport
@testable import StoreRelayConfig

/// The `cluster` block's `password`, `user` and `client-cert` (issue 26, points 1-3): how an
/// instance gets into the server, and that no message, report or warning shows a password.
@Suite struct ClusterAccessTests {
    static let secret = "s3/cr:et@hunter2"

    @Test func passwordAndUserOverrideTheURLs() throws {
        let c = try parsed("""
            cluster rediss://old:replaced@redis.internal:6380/2 {
                password ${REDIS_PASSWORD}
                user storerelay
                client-cert ./client.pem ./client-key.pem
            }
            """, environment: ["REDIS_PASSWORD": Self.secret])
        let cluster = try #require(c.cluster)
        #expect(cluster.url.user == "storerelay" && cluster.url.password == Self.secret)
        #expect(cluster.url.host == "redis.internal" && cluster.url.port == 6380 && cluster.url.database == 2)
        #expect(cluster.clientCertificate == TLSFiles(certificateFile: "./client.pem", privateKeyFile: "./client-key.pem"))
        let report = c.checkReport()
        #expect(report.contains("Cluster mode: rediss://storerelay:***@redis.internal:6380/2 (password <set>)"), "\(report)")
        #expect(report.contains("client-cert ./client.pem ./client-key.pem (mutual TLS)"))
        #expect(!report.contains("hunter2") && !report.contains("replaced"), "the password never shows")
        var dumped = ""
        dump(c, to: &dumped)
        #expect(!dumped.contains("hunter2"), "not even in a dump")
        // A password alone keeps the URL's user (or the default one).
        let alone = try #require(try parsed("cluster redis://127.0.0.1:6379 {\n    password p\n}\n").cluster)
        #expect(alone.url.user == nil && alone.url.password == "p")
        #expect(try parsed("cluster redis://127.0.0.1:6379\n").checkReport().contains("(no password)"))
    }

    /// Issue 26, point 1: a password with `/` was split at it and its tail echoed. No error
    /// quotes any part of a password, from the URL or from `password`.
    @Test(arguments: [
        "cluster redis://relay:abc/hunter2@10.0.0.5:99999\n",
        "cluster redis://relay:abc/hunter2@10.0.0.5:6379/db\n",
        "cluster redis://relay:abc hunter2@10.0.0.5:6379\n",
        "cluster redis:/relay:abc/hunter2@10.0.0.5\n",
        "cluster redis://relay:abc%zz/hunter2@10.0.0.5\n",
        "cluster redis://127.0.0.1:6379 {\n    password abc hunter2\n}\n",
        "cluster redis://127.0.0.1:6379 {\n    password abc\n    password hunter2\n}\n",
        "cluster redis://127.0.0.1:6379 {\n    password \"\"\n}\n",
    ])
    func noErrorQuotesAPassword(_ text: String) {
        let found = errors(text)
        #expect(!found.isEmpty, "\(text) was accepted")
        for error in found {
            #expect(!error.description.contains("hunter2") && !error.description.contains("abc"), "\(error)")
        }
    }

    @Test func eachMistakeIsNamed() {
        func block(_ line: String) -> String { "cluster redis://127.0.0.1:6379 {\n    \(line)\n}\n" }
        expectError(block("password"), .missingArgument, line: 2, column: 13, containing: "password SECRET")
        expectError(block("password a b"), .unexpectedArgument, line: 2, column: 16, containing: "not shown")
        expectError(block("user a b"), .unexpectedArgument, line: 2, column: 12)
        expectError(block("user \"a b\""), .invalidValue, line: 2, column: 10, containing: "ACL user name")
        expectError(block("client-cert ./client.pem"), .missingArgument, line: 2, column: 29, containing: "CERT-FILE KEY-FILE")
        expectError(block("user a\n    user b"), .duplicate, line: 3, column: 5)
    }

    /// Issue 26, point 2: a password over plaintext to another machine is warned about by
    /// `check` (and logged by `serve` at start, which logs every warning).
    @Test func aPlaintextPasswordToAnotherHostIsWarnedAbout() throws {
        func warnings(_ text: String) throws -> [String] {
            try parsed(text, environment: ["PW": Self.secret]).warnings.filter { $0.contains("in plaintext") }
        }
        let warned = try warnings("cluster redis://:${PW}@10.0.0.5:6379\n")
        #expect(warned.count == 1 && warned[0].contains("plaintext") && warned[0].contains("rediss://"), "\(warned)")
        #expect(!warned.joined().contains("hunter2"))
        #expect(try warnings("cluster redis://cache.internal {\n    password ${PW}\n}\n").count == 1, "the block's password too")
        #expect(try warnings("cluster rediss://:${PW}@10.0.0.5:6379\n").isEmpty, "TLS")
        #expect(try warnings("cluster redis://:${PW}@127.0.0.1:6379\n").isEmpty, "loopback")
        #expect(try warnings("cluster redis://:${PW}@localhost:6379\n").isEmpty, "loopback by name")
        #expect(try warnings("cluster redis://10.0.0.5:6379\n").isEmpty, "no password to read")
    }

    /// Issue 26, point 3: `check` reads the client certificate and key as `serve` will, and
    /// treats the key as a private key.
    @Test func checkReadsTheClientCertificateAndKey() throws {
        let directory = try TestPaths.makeTemporaryDirectory("cluster-client-cert")
        let configuration = try parsed("""
            cluster rediss://127.0.0.1:6380 {
                client-cert \(directory.path)/client.pem \(directory.path)/client-key.pem
            }
            """)
        let files = configuration.referencedFiles.filter { $0.directive == "cluster client-cert" }
        #expect(files.map(\.isPrivateKey) == [false, true])
        #expect(configuration.unreadableFiles() == [
            "cluster client-cert \(directory.path)/client.pem: no such file",
            "cluster client-cert \(directory.path)/client-key.pem: no such file",
        ])
        for name in ["client.pem", "client-key.pem"] {
            try "x".write(to: directory.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
        chmod(directory.appendingPathComponent("client-key.pem").path, 0o644)
        #expect(configuration.unreadableFiles().isEmpty)
        #expect(configuration.warnings.contains { $0.hasPrefix("cluster client-cert") && $0.contains("chmod 600") })
    }
}
