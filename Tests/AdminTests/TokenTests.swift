import Foundation
import Testing
import StoreRelayGateway
import StoreRelayTestSupport

@Suite struct AdminTokenTests {
    @Test func generatedOnceWithMode0600AndReused() throws {
        let data = try TestPaths.makeTemporaryDirectory("storerelay-token").path + "/data"
        #expect(AdminToken.read(dataDirectory: data) == nil)
        let token = try AdminToken.resolve(configured: nil, dataDirectory: data)
        #expect(token.count == 64 && token.allSatisfy { $0.isHexDigit })
        let path = AdminToken.path(dataDirectory: data)
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        #expect(AdminToken.read(dataDirectory: data) == token)
        #expect(try AdminToken.resolve(configured: nil, dataDirectory: data) == token, "reused after a restart")
        #expect(!FileManager.default.fileExists(atPath: path + ".tmp"))

        let other = try TestPaths.makeTemporaryDirectory("storerelay-token").path
        #expect(try AdminToken.resolve(configured: nil, dataDirectory: other) != token, "random per installation")
    }

    @Test func theConfiguredTokenWinsAndWritesNothing() throws {
        let data = try TestPaths.makeTemporaryDirectory("storerelay-token").path
        #expect(try AdminToken.resolve(configured: "from-config", dataDirectory: data) == "from-config")
        #expect(!FileManager.default.fileExists(atPath: AdminToken.path(dataDirectory: data)))
        try Data("  from-file \n".utf8).write(to: URL(fileURLWithPath: AdminToken.path(dataDirectory: data)))
        #expect(AdminToken.read(dataDirectory: data) == "from-file")
        #expect(try AdminToken.resolve(configured: "", dataDirectory: data) == "from-file")
    }

    @Test func anUnwritableDirectoryIsATypedFailure() throws {
        let file = try TestPaths.makeTemporaryDirectory("storerelay-token").path + "/plain-file"
        try Data("x".utf8).write(to: URL(fileURLWithPath: file))
        #expect(throws: AdminToken.Failure.self) { try AdminToken.resolve(configured: nil, dataDirectory: file + "/data") }
    }
}
