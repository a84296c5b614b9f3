import Foundation
import Testing
import StoreRelayCore
import StoreRelayTestSupport

/// A first run as README tells it (issue 25, point 3): `serve` on the repository's
/// routes.conf, then `simulate`, reaches 200 without editing a file; and `check` fails on a
/// file `serve` could not read, naming its absolute path.
@Suite("First run")
struct FirstRunTests {
    /// The repository's routes.conf (the embedded default, byte for byte, as a ConfigTests
    /// test checks), moved to loopback ports of the kernel's choosing: nothing else changed.
    static func defaultOnEphemeralPorts() throws -> String {
        let text = try String(contentsOf: TestPaths.packageRoot.appendingPathComponent("routes.conf"), encoding: .utf8)
            .replacingOccurrences(of: "listen 0.0.0.0:8080", with: "listen 127.0.0.1:0")
            .replacingOccurrences(of: "admin  127.0.0.1:9090", with: "admin  127.0.0.1:0")
        precondition(text.contains("listen 127.0.0.1:0") && text.contains("admin  127.0.0.1:0"))
        return text
    }

    @Test func serveThenSimulateReaches200() throws {
        let directory = try TestPaths.makeTemporaryDirectory("first-run")
        let gateway = try Gateway(config: try Self.defaultOnEphemeralPorts(), directory: directory, host: .childProcess)
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("data/dev-ca/root.pem").path))
        let simulated = try CommandRunner.storerelay(
            ["simulate", "--type", "SUBSCRIBED", "--subtype", "INITIAL_BUY", "--url", gateway.notificationURL],
            directory: directory)
        #expect(simulated.status == 0, "\(simulated.stdout) \(simulated.stderr)")
        #expect(simulated.stdout.contains("\"status\":\"accepted\""))
        #expect(pollUntil(timeout: 10) { !gateway.fileQueueLines("data/queues/sandbox").isEmpty })
        // The dev CA vouches for sandbox only: its production notification is refused.
        let production = try CommandRunner.storerelay(
            ["simulate", "--type", "DID_RENEW", "--env", "production", "--url", gateway.notificationURL],
            directory: directory)
        #expect(production.status == 1)
        #expect(production.stdout.contains("HTTP 401"))
    }

    @Test func checkFailsOnAFileServeCannotRead() throws {
        let directory = try TestPaths.makeTemporaryDirectory("first-run-check")
        try "listen 127.0.0.1:0\ntrust-root ./test-root.pem sandbox\n"
            .write(to: directory.appendingPathComponent("routes.conf"), atomically: true, encoding: .utf8)
        let missing = try CommandRunner.storerelay(["check"], directory: directory)
        #expect(missing.status == 1)
        let absolute = directory.resolvingSymlinksInPath().appendingPathComponent("test-root.pem").path
        #expect(missing.stderr.contains("cannot read trust-root"), "\(missing.stderr)")
        #expect(missing.stderr.contains("test-root.pem: no such file"))
        #expect(missing.stderr.contains(absolute) || missing.stderr.contains(directory.appendingPathComponent("test-root.pem").path))
        try TestCertificateAuthority.shared.rootPEM.write(
            to: directory.appendingPathComponent("test-root.pem"), atomically: true, encoding: .utf8)
        let present = try CommandRunner.storerelay(["check"], directory: directory)
        #expect(present.status == 0, "\(present.stderr)")
        #expect(present.stdout.contains("Files (relative paths are relative to the working directory"))
        // The repository's own file passes before `serve` ever created the dev CA.
        let fresh = try TestPaths.makeTemporaryDirectory("first-run-default")
        let embedded = try CommandRunner.storerelay(["check"], directory: fresh)
        #expect(embedded.status == 0, "\(embedded.stderr)")
        #expect(embedded.stdout.contains("serve creates it when missing"))
    }
}
