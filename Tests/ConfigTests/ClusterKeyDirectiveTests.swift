import Testing
import StoreRelayCore
@testable import StoreRelayConfig

/// `cluster-key` in the `cluster` block (issue 26): optional, warned about when absent,
/// never printed.
@Suite struct ClusterKeyDirectiveTests {
    static let key = "0123456789abcdef0123456789abcdef"
    static let previous = "fedcba9876543210fedcba9876543210"

    func block(_ line: String) -> String { "cluster redis://127.0.0.1:6379 {\n    \(line)\n}\n" }

    @Test func aKeyARotationAndTurningItOn() throws {
        let sealed = try parsed(block("cluster-key ${KEY}"), environment: ["KEY": Self.key])
        #expect(sealed.cluster?.clusterKeys.map(\.value) == [Self.key] && sealed.cluster?.acceptsUnsealed == false)
        #expect(!sealed.warnings.contains { $0.contains("cluster-key") }, "\(sealed.warnings)")
        let report = sealed.checkReport()
        #expect(report.contains("cluster-key <set>") && !report.contains(Self.key))

        let rotating = try parsed(block("cluster-key \(Self.key) \(Self.previous)"))
        #expect(rotating.cluster?.clusterKeys.map(\.value) == [Self.key, Self.previous])
        let turningOn = try parsed(block("cluster-key \(Self.key) unsealed"))
        #expect(turningOn.cluster?.clusterKeys.map(\.value) == [Self.key] && turningOn.cluster?.acceptsUnsealed == true)
        #expect(turningOn.warnings.contains { $0.contains("remove `unsealed`") }, "\(turningOn.warnings)")
    }

    /// Configurations from before the key still load; they warn, in `check` and at start.
    @Test func withoutAKeyClusterModeWarns() throws {
        let bare = try parsed("cluster redis://127.0.0.1:6379\n")
        #expect(bare.cluster?.clusterKeys.isEmpty == true)
        #expect(bare.warnings.contains { $0.contains("cluster has no cluster-key") && $0.contains("forged") }, "\(bare.warnings)")
        #expect(bare.checkReport().contains("cluster-key <not set>"))
        #expect(!(try parsed("listen 127.0.0.1:8080\n")).warnings.contains { $0.contains("cluster-key") }, "single-node mode")
    }

    @Test func eachMistakeIsNamedWithoutTheKey() {
        let short = expectError(block("cluster-key too-short-a-key"), .invalidValue, line: 2, column: 17, containing: "at least 32")
        #expect(short?.message.contains("too-short-a-key") == false, "the key is never printed")
        expectError(block("cluster-key"), .missingArgument, line: 2, column: 16)
        expectError(block("cluster-key unsealed"), .invalidValue, line: 2, column: 17, containing: "at least 32")
        expectError(block("cluster-key \(Self.key) short"), .invalidValue, line: 2, column: 50, containing: "at least 32")
        expectError(block("cluster-key \(Self.key)\n    cluster-key \(Self.key)"), .duplicate, line: 3, column: 5)
    }
}
