import Foundation
import Testing
@testable import StoreRelayGateway
import StoreRelayConfig
import StoreRelayCore
import StoreRelayTestSupport

/// Directories under `data` that others can write to are tightened at start (issue 25,
/// point 8), not only `dead-letters/`: the journal and the queues hold notifications too.
@Suite struct DataDirectoryModeTests {
    static func mode(_ path: String) -> mode_t {
        var info = stat()
        _ = stat(path, &info)
        return info.st_mode & 0o7777
    }

    @Test func aGatewayStartTightensWhatOthersCouldWrite() throws {
        let directory = try TestPaths.makeTemporaryDirectory("data-modes")
        let data = directory.path + "/data"
        let paths = [data, data + "/journal", data + "/dead-letters", data + "/replays", data + "/queues/all"]
        for path in paths {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            chmod(path, 0o777)
        }
        chmod(data + "/queues", 0o777)
        let configuration = try GatewayConfiguration.parse(text: """
            listen 127.0.0.1:0
            admin 127.0.0.1:0
            data \(data)
            destination all file \(data)/queues/all
            route * * * -> all
            """)
        let gateway = try waitForCompletion { Gateway.start(configuration: configuration, logger: Logger(label: "test", level: .error), completion: $0) }
        defer {
            let stopped = DispatchSemaphore(value: 0)
            gateway.stop { stopped.signal() }
            stopped.wait()
        }
        #expect(String(Self.mode(data), radix: 8) == "755")
        #expect(String(Self.mode(data + "/journal"), radix: 8) == "700")
        #expect(String(Self.mode(data + "/dead-letters"), radix: 8) == "700")
        #expect(String(Self.mode(data + "/replays"), radix: 8) == "700")
        #expect(String(Self.mode(data + "/queues/all"), radix: 8) == "750")
    }

    /// Only what the gateway would not grant is taken; a narrower mode, or setgid on a
    /// group-shared queue, is left as the operator set it.
    @Test func onlyTheExtraBitsAreTaken() throws {
        let path = try TestPaths.makeTemporaryDirectory("restrict").path + "/queue"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        chmod(path, 0o2770)
        #expect(try PrivateFiles.restrictDirectory(path, to: 0o2750) == 0o2770)
        #expect(Self.mode(path) == 0o2750)
        #expect(try PrivateFiles.restrictDirectory(path, to: 0o2750) == nil)
        chmod(path, 0o700)
        #expect(try PrivateFiles.restrictDirectory(path, to: 0o2750) == nil)
        #expect(Self.mode(path) == 0o700)
        #expect(throws: SystemCallFailure.self) { try PrivateFiles.restrictDirectory(path + "/absent", to: 0o700) }
    }
}
